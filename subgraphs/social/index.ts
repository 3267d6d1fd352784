import { logConnectionBudget } from '#lib/data/connection-budget.js';
import { jobQueueConnections } from '#lib/data/job-queue.js';
import type { Config } from '#lib/config.js';
import { openDatabase } from '#lib/data/database.js';
import type { Logger } from '#lib/observability/logger.js';
import type { Deps } from '#lib/service.js';
import { startSubgraphService, type RunningSubgraph, type SubgraphListenOptions } from '#lib/subgraph/subgraph.js';
import { socialMigrations } from './migrations/index.js';
import { PublishQueue } from './publishing/publish-queue.js';
import { startPublisherWorkers } from './publishing/publisher.worker.js';
import { createSocialContext } from './social.context.js';
import { socialEntities } from './social.entities.js';
import { createSocialRuntime, publisherToolsOf, type SocialRuntime } from './social.runtime.js';
import { socialSubgraph } from './social.subgraph.js';
import { startWebhookWorkers, webhookSettingsOf } from './webhooks/webhook.delivery.js';

export function startSocialSubgraph(
  deps: Deps,
  options: SubgraphListenOptions,
): Promise<RunningSubgraph<SocialRuntime>> {
  return startSubgraphService(deps, {
    service: 'social',
    entities: socialEntities,
    migrations: socialMigrations,
    definition: socialSubgraph(),
    runtime: (orm) => createSocialRuntime(deps, orm),
    context: createSocialContext,
    ...options,
  });
}

/** Why a publisher of its own cannot run with `config`: undefined when it can. */
export function publisherWorkerRefusal(config: Config): string | undefined {
  // Embedded PGlite belongs to the one process that opened it; a second process cannot share it.
  return config.env.DATABASE_URL
    ? undefined
    : 'npm run worker needs DATABASE_URL: with embedded PGlite the publisher runs inside npm start';
}

/**
 * A publisher on its own (`npm run worker`): the social database (migrations run as on start),
 * the job queue and its workers, no API. Several may run beside the API; pg-boss hands each job
 * to one of them, and the attempt records keep a post from going out twice whatever happens.
 */
export async function startPublisherWorker(config: Config, logger: Logger): Promise<{ close(): Promise<void> }> {
  const refusal = publisherWorkerRefusal(config);
  if (refusal) throw new Error(refusal);
  const orm = await openDatabase(config, logger, {
    service: 'social',
    entities: socialEntities,
    migrations: socialMigrations,
  });
  let queue: PublishQueue | undefined;
  let webhooks: { stop(): Promise<void> } | undefined;
  try {
    queue = await PublishQueue.start(config, orm, logger);
    logConnectionBudget(config, logger, 'publisher', { queue: jobQueueConnections(config) });
    await startPublisherWorkers(queue, orm, publisherToolsOf(config), logger);
    webhooks = await startWebhookWorkers(queue.boss, orm, webhookSettingsOf(config), logger);
  } catch (error) {
    await webhooks?.stop();
    await queue?.stop();
    await orm.close();
    throw error;
  }
  const started = queue;
  return {
    close: async () => {
      await webhooks?.stop();
      await started.stop();
      await orm.close();
    },
  };
}
