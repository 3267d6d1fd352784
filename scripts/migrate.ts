import 'reflect-metadata';
import { openDatabase, type DatabaseOptions } from '#lib/data/database.js';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { runTask } from '#lib/process/main.js';
import { contactsMigrations } from '#subgraphs/contacts/migrations/index.js';
import { socialMigrations } from '#subgraphs/social/migrations/index.js';
import { surveysMigrations } from '#subgraphs/surveys/migrations/index.js';

/** Every service's database with its migrations; the migrations are SQL of their own, so no entity is needed to run them. */
const SERVICE_MIGRATIONS: Array<Pick<DatabaseOptions, 'service' | 'migrations'>> = [
  { service: 'social', migrations: socialMigrations },
  { service: 'surveys', migrations: surveysMigrations },
  { service: 'contacts', migrations: contactsMigrations },
];

exitWithHelpIfAsked(`
usage: npm run migrate      (node dist/scripts/migrate.js)

Brings the database of every service (social, surveys, contacts) up to date and exits: 0 when done,
1 naming the problem. The database is DATABASE_URL's PostgreSQL, or embedded PGlite under DATA_DIR.
On PostgreSQL, safe beside running parts: they migrate on start too, under the same lock. Embedded
PGlite takes one process at a time: while npm start runs on DATA_DIR this refuses, naming it (npm start
migrates on start anyway).
`);

/**
 * `npm run migrate` (`node dist/scripts/migrate.js`): brings every service's database up to date and
 * exits, as the Kubernetes Job and the compose `migrate` service run it before the parts. The parts
 * migrate on start too; on PostgreSQL the advisory lock in openDatabase makes whoever comes second
 * wait and find nothing left to do, and on embedded PGlite the DATA_DIR lock refuses a second process.
 */
void runTask('Migrations', async (config, logger) => {
  for (const { service, migrations } of SERVICE_MIGRATIONS) {
    const orm = await openDatabase(config, logger, { service, migrations, entities: [] });
    await orm.close();
  }
  logger.info('every database is up to date');
});
