import type { PgBoss } from 'pg-boss';
import type { Config } from '#lib/config.js';
import type { EntityManager, Orm } from '#lib/data/database.js';
import { jobsDbOf, startJobBoss, type QueueOptions } from '#lib/data/job-queue.js';
import type { Logger } from '#lib/observability/logger.js';
import { publishQueueJobs } from '#lib/observability/metrics.js';
import { PostStatus, type Post } from '../content/post.entity.js';
import type { PublishSchedule } from '../content/publish-schedule.js';

export const PUBLISH_QUEUE = 'social-publish-post';
export const REFRESH_QUEUE = 'social-refresh-tokens';
const JOBS_SCHEMA = 'social_jobs';

/**
 * A worker that dies mid-job (killed, its machine gone) stops sending heartbeats: the job is
 * failed after HEARTBEAT_SECONDS and retried RETRY_DELAY_SECONDS later, so another worker
 * settles the post within a minute (not after expireInSeconds plus a maintenance round).
 * expireInSeconds still bounds a job whose worker is alive but stuck.
 */
const HEARTBEAT_SECONDS = 10;
const RETRY_DELAY_SECONDS = 10;
const QUEUE_OPTIONS: QueueOptions = {
  retryLimit: 5,
  retryDelay: RETRY_DELAY_SECONDS,
  retryBackoff: true,
  expireInSeconds: 300,
  heartbeatSeconds: HEARTBEAT_SECONDS,
};

export interface PublishJob {
  postId: string;
  /** The schedule the job was made for; a job whose post has moved on since does nothing. */
  scheduledAt: string;
}

/**
 * The publisher's job queue (pg-boss, in the service's own database, schema `social_jobs`), and
 * the schedule posts follow: PostService and the publisher call `follow` in the transaction of
 * each change, so a queued post has its one job at its scheduled time, a reschedule moves it,
 * and leaving the queue or deleting the post cancels it.
 */
export class PublishQueue implements PublishSchedule {
  private constructor(
    readonly boss: PgBoss,
    private readonly logger: Logger,
    private readonly stopCounting: () => void,
  ) {}

  static async start(config: Config, orm: Orm, logger: Logger): Promise<PublishQueue> {
    const log = logger.child({ component: 'social-jobs' });
    const boss = await startJobBoss(config, orm, {
      schema: JOBS_SCHEMA,
      applicationName: 'social-publisher',
      queues: { [PUBLISH_QUEUE]: QUEUE_OPTIONS, [REFRESH_QUEUE]: QUEUE_OPTIONS },
      logger: log,
    });
    // `publish_queue_jobs` at every scrape, from pg-boss's own counts of each queue.
    const stopCounting = publishQueueJobs.readOnScrape(async (gauge) => {
      const queues = await boss.getQueues([PUBLISH_QUEUE, REFRESH_QUEUE]).catch((error: unknown) => {
        log.warn({ err: error }, 'queue sizes could not be read for metrics');
        return [];
      });
      for (const queue of queues) {
        gauge.set({ queue: queue.name, state: 'waiting' }, queue.readyCount);
        gauge.set({ queue: queue.name, state: 'deferred' }, queue.deferredCount);
        gauge.set({ queue: queue.name, state: 'active' }, queue.activeCount);
        gauge.set({ queue: queue.name, state: 'failed' }, queue.failedCount);
      }
    });
    return new PublishQueue(boss, log, stopCounting);
  }

  async follow(tx: EntityManager, post: Post, change: { removed: boolean } = { removed: false }): Promise<void> {
    const db = jobsDbOf(tx);
    const wanted = !change.removed && post.status === PostStatus.QUEUED && post.scheduledAt ? post.scheduledAt : null;
    const { rows } = await db.executeSql('select job_id, run_at from social.publish_job where post_id = $1', [post.id]);
    const existing = rows[0] as { job_id: string; run_at: Date | string } | undefined;
    if (existing && wanted && new Date(existing.run_at).getTime() === wanted.getTime()) return;
    if (existing) {
      // Once the post is publishing, its job is the one running now; it must not be cancelled.
      if (post.status !== PostStatus.PUBLISHING && post.status !== PostStatus.PUBLISHED) {
        await this.boss.cancel(PUBLISH_QUEUE, existing.job_id, { db });
      }
      await db.executeSql('delete from social.publish_job where post_id = $1', [post.id]);
    }
    if (!wanted) return;
    const job: PublishJob = { postId: post.id, scheduledAt: wanted.toISOString() };
    const jobId = await this.boss.send(PUBLISH_QUEUE, job, { startAfter: wanted, db });
    if (!jobId) throw new Error('the publish job was not created');
    await db.executeSql('insert into social.publish_job (post_id, job_id, run_at) values ($1, $2, $3)', [
      post.id,
      jobId,
      wanted.toISOString(),
    ]);
    this.logger.debug({ postId: post.id, jobId, runAt: job.scheduledAt }, 'publish job planned');
  }

  async unknownOutcomes(tx: EntityManager, postId: string): Promise<string[]> {
    const rows = await tx.getConnection().execute<{ platform: string }[]>(
      `select platform from (
         select distinct on (platform) platform, status, outcome_unknown from social.publish_attempt
         where post_id = ? order by platform, attempted_at desc, id desc
       ) latest where status = 'failed' and outcome_unknown`,
      [postId],
      'all',
      tx.getTransactionContext(),
    );
    return rows.map((row) => row.platform);
  }

  /** True when the queue's tables answer (the `jobs` check of /health). */
  async answers(): Promise<boolean> {
    try {
      return (await this.boss.getQueue(PUBLISH_QUEUE)) !== null;
    } catch {
      return false;
    }
  }

  async stop(): Promise<void> {
    this.stopCounting();
    await this.boss.stop({ graceful: true, timeout: 10_000, close: true });
  }
}
