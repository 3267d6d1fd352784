import { randomUUID } from 'node:crypto';
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { PgBoss, fromPglite } from 'pg-boss';
import type { Db as IDatabase, PGliteLike } from 'pg-boss';
import type { Config } from '../../../lib/config.js';
import type { EntityManager, Orm } from '../../../lib/data/database.js';
import type { Logger } from '../../../lib/observability/logger.js';
import { publishQueueJobs } from '../../../lib/observability/metrics.js';
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
const QUEUE_OPTIONS = {
  retryLimit: 5,
  retryDelay: RETRY_DELAY_SECONDS,
  retryBackoff: true,
  expireInSeconds: 300,
  heartbeatSeconds: HEARTBEAT_SECONDS,
};
/** How often pg-boss looks for jobs whose heartbeat stopped (it also runs its maintenance then). */
const SUPERVISION = { superviseIntervalSeconds: 10, monitorIntervalSeconds: 10 };

export interface PublishJob {
  postId: string;
  /** The schedule the job was made for; a job whose post has moved on since does nothing. */
  scheduledAt: string;
}

type AnyKysely = Kysely<unknown> | Transaction<unknown>;

/** pg-boss statements run on a Kysely connection or transaction, as they are ($1 placeholders). */
function kyselyDb(executor: AnyKysely): IDatabase {
  return {
    async executeSql(text: string, values?: unknown[]) {
      const result = await executor.executeQuery(CompiledQuery.raw(text, values ?? []));
      return { rows: result.rows };
    },
  };
}

/** pg-boss statements in `tx`'s transaction (or on its connection outside one): a job sent this way commits or rolls back with the change. */
export function jobsDbOf(tx: EntityManager): IDatabase {
  return kyselyDb(tx.getTransactionContext<AnyKysely>() ?? tx.getConnection().getClient());
}

/**
 * pg-boss over the service's own embedded PGlite. PGlite has one connection, which MikroORM's
 * Kysely dialect guards with a lock for the length of each statement or transaction; every pg-boss
 * statement takes that same lock, so it can never land inside a transaction of the API. Statements
 * without parameters may be several at once (pg-boss's DDL), which only PGlite's `exec` runs.
 */
async function embeddedDb(orm: Orm): Promise<IDatabase> {
  const connection = orm.em.getConnection();
  const kysely = connection.getClient<Kysely<unknown>>();
  const pglite = await (connection as unknown as { getNativeClient(): Promise<PGliteLike> }).getNativeClient();
  const direct = fromPglite(pglite);
  return {
    executeSql: (text: string, values?: unknown[]) =>
      kysely.connection().execute(() => direct.executeSql(text, values)),
  };
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
    const boss = config.env.DATABASE_URL
      ? new PgBoss({
          connectionString: config.env.DATABASE_URL,
          schema: JOBS_SCHEMA,
          max: 4,
          application_name: 'social-publisher',
          ...SUPERVISION,
        })
      : new PgBoss({ db: await embeddedDb(orm), schema: JOBS_SCHEMA, backend: 'pglite', ...SUPERVISION });
    boss.on('error', (error) => log.error({ err: error }, 'job queue error'));
    await boss.start();
    for (const name of [PUBLISH_QUEUE, REFRESH_QUEUE]) {
      if (!(await boss.getQueue(name))) {
        await boss.createQueue(name, QUEUE_OPTIONS).catch(async (error) => {
          // Another process made it a moment ago.
          if (!(await boss.getQueue(name))) throw error;
        });
      } else {
        // Queues made by an earlier release get today's settings too.
        const { retryLimit, retryDelay, retryBackoff, expireInSeconds, heartbeatSeconds } = QUEUE_OPTIONS;
        await boss.updateQueue(name, { retryLimit, retryDelay, retryBackoff, expireInSeconds, heartbeatSeconds });
      }
      // Fill pg-boss's queue cache now: a cache miss later would query outside the caller's transaction.
      await boss.getJobById(name, randomUUID());
    }
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
    const executor = tx.getTransactionContext<AnyKysely>() ?? tx.getConnection().getClient();
    const db = kyselyDb(executor);
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
