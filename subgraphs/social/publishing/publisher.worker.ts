import type { Config } from '../../../lib/config.js';
import { openDatabase } from '../../../lib/database.js';
import type { Logger } from '../../../lib/logger.js';
import { createStorage } from '../../../lib/storage.js';
import { socialMigrations } from '../migrations/index.js';
import { Outreach } from '../social.runtime.js';
import { socialEntities } from '../social.entities.js';

/**
 * A publisher on its own (`npm run worker`): the social database (migrations run as on start),
 * the job queue and its workers, no API. Several may run beside the API; pg-boss hands each job
 * to one of them, and the attempt records keep a post from going out twice whatever happens.
 */
export async function startPublisherWorker(config: Config, logger: Logger): Promise<{ close(): Promise<void> }> {
  if (!config.env.DATABASE_URL) {
    // Embedded PGlite belongs to the one process that opened it; a second process cannot share it.
    throw new Error('npm run worker needs DATABASE_URL: with embedded PGlite the publisher runs inside npm start');
  }
  const orm = await openDatabase(config, logger, { service: 'social', entities: socialEntities, migrations: socialMigrations });
  try {
    const outreach = new Outreach(config, logger, createStorage(config));
    const started = await outreach.start(orm, { work: true });
    return {
      close: async () => {
        await started.close();
        await orm.close();
      },
    };
  } catch (error) {
    await orm.close();
    throw error;
  }
}
