import type { JobWithMetadata } from 'pg-boss';
import type { Orm } from '#lib/data/database.js';
import type { Logger } from '#lib/observability/logger.js';
import { reasonOf } from '#lib/errors.js';
import { PlatformTokenService } from '../integrations/platform-token.service.js';
import { PUBLISH_QUEUE, REFRESH_QUEUE, type PublishJob, type PublishQueue } from './publish-queue.js';
import { PublishDeferred, PublisherService, type PublisherTools } from './publisher.service.js';

/**
 * Puts this process to work on the queue: the publisher takes one due post at a time, and the
 * token renewal runs every minute. pg-boss hands each job to one worker of all the processes
 * that work on the queue; the attempt records keep a post from going out twice whatever happens.
 */
export async function startPublisherWorkers(
  queue: PublishQueue,
  orm: Orm,
  tools: PublisherTools,
  logger: Logger,
): Promise<void> {
  const log = logger.child({ component: 'publisher' });
  await queue.boss.work<PublishJob>(
    PUBLISH_QUEUE,
    { pollingIntervalSeconds: 1, batchSize: 1, includeMetadata: true },
    async ([job]) => {
      const publisher = new PublisherService(orm.em.fork(), tools, queue, log);
      try {
        const { retryCount, retryLimit } = job as JobWithMetadata<PublishJob>;
        const outcome = await publisher.run(job.data, { lastChance: retryCount >= retryLimit });
        log.info({ postId: job.data.postId, outcome }, 'publish job done');
        return { outcome };
      } catch (error) {
        // pg-boss keeps the error in its table only; an operator reads the log, so every failure is said there.
        if (error instanceof PublishDeferred)
          log.warn({ postId: job.data.postId, reason: error.message }, 'publish deferred');
        else log.error({ err: error, postId: job.data.postId, reason: reasonOf(error) }, 'publish job failed');
        throw error;
      }
    },
  );
  await queue.boss.work(REFRESH_QUEUE, { pollingIntervalSeconds: 5 }, async () => {
    try {
      return await new PlatformTokenService(orm.em.fork(), tools, log).refreshDue();
    } catch (error) {
      log.error({ err: error, reason: reasonOf(error) }, 'token renewal job failed');
      throw error;
    }
  });
  await queue.boss.schedule(REFRESH_QUEUE, '* * * * *');
  log.info('publisher working on the queue');
}
