import type { JobWithMetadata, PgBoss } from 'pg-boss';
import type { Config } from '#lib/config.js';
import type { EntityManager, Orm } from '#lib/data/database.js';
import { jobsDbOf, startJobBoss, type QueueOptions } from '#lib/data/job-queue.js';
import type { Logger } from '#lib/observability/logger.js';
import type { ObjectStorage } from '#lib/storage/storage.js';
import type { ImportLimits } from './contact-import.csv.js';
import { ContactImport } from './contact-import.entity.js';
import { ContactImportJob, ImportInterrupted } from './contact-import.job.js';

export const IMPORT_QUEUE = 'contacts-import';
const JOBS_SCHEMA = 'contacts_jobs';

/**
 * A process killed mid-import stops its heartbeat: pg-boss fails the job after HEARTBEAT_SECONDS and
 * another worker (or this one, restarted) takes it RETRY_DELAY_SECONDS later and goes on from the last
 * written batch. Every stop of the platform spends one retry, hence many. expireInSeconds bounds a
 * stuck worker, not a long import: a million rows on embedded PGlite take several minutes.
 */
const QUEUE_OPTIONS: QueueOptions = {
  retryLimit: 50,
  retryDelay: 2,
  retryBackoff: false,
  expireInSeconds: 6 * 60 * 60,
  heartbeatSeconds: 10,
};

interface ImportJobData {
  importId: string;
}

/**
 * The contacts' import queue (pg-boss, schema `contacts_jobs` of the service's database). Every
 * contacts process works on it (but those started with `IMPORT_WORKER=off`), one import at a time each;
 * pg-boss gives each job to one of them.
 */
export class ContactImportQueue {
  private stopping = false;
  private workerId: string | null = null;

  private constructor(
    private readonly boss: PgBoss,
    private readonly logger: Logger,
  ) {}

  static async start(
    config: Config,
    orm: Orm,
    tools: { storage: ObjectStorage; limits: ImportLimits; logger: Logger },
  ): Promise<ContactImportQueue> {
    const logger = tools.logger.child({ component: 'contact-import' });
    const boss = await startJobBoss(config, orm, {
      schema: JOBS_SCHEMA,
      applicationName: 'contacts-import',
      queues: { [IMPORT_QUEUE]: QUEUE_OPTIONS },
      logger,
    });
    const queue = new ContactImportQueue(boss, logger);
    // Off, the process still queues imports (send) and answers their progress; others run them.
    if (config.env.IMPORT_WORKER === 'off') return queue;
    queue.workerId = await boss.work<ImportJobData>(
      IMPORT_QUEUE,
      { pollingIntervalSeconds: 1, batchSize: 1, includeMetadata: true },
      async ([job]) => {
        const { retryCount, retryLimit, signal } = job as JobWithMetadata<ImportJobData>;
        const runner = new ContactImportJob(
          orm.em.fork(),
          tools.storage,
          tools.limits,
          logger,
          () => queue.stopping || signal.aborted,
        );
        try {
          await runner.run(job.data.importId);
        } catch (error) {
          if (error instanceof ImportInterrupted) logger.info({ importId: job.data.importId }, error.message);
          else logger.error({ err: error, importId: job.data.importId, retryCount }, 'import batch failed');
          // The last attempt ends the import, so that it does not stay `running` for ever.
          if (retryCount >= retryLimit) {
            const stuck = await orm.em.fork().findOne(ContactImport, { id: job.data.importId });
            if (stuck) await runner.fail(stuck, error).then(() => runner.dropFile(stuck));
          }
          throw error;
        }
      },
    );
    return queue;
  }

  /** Queues the import's job in `tx`'s transaction: the import row and its job commit together. */
  async send(tx: EntityManager, importId: string): Promise<void> {
    const id = await this.boss.send(IMPORT_QUEUE, { importId } satisfies ImportJobData, { db: jobsDbOf(tx) });
    if (!id) throw new Error('the import job was not created');
  }

  /** This process's worker looks for a job now rather than at its next poll: a small import is done at once. */
  wake(): void {
    if (this.workerId && !this.stopping) this.boss.notifyWorker(this.workerId);
  }

  /** True when the queue's tables answer. */
  async answers(): Promise<boolean> {
    try {
      return (await this.boss.getQueue(IMPORT_QUEUE)) !== null;
    } catch {
      return false;
    }
  }

  /** The import under way stops at its next batch and is taken up again after the restart. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.boss.stop({ graceful: true, timeout: 15_000, close: true });
    this.logger.debug('import queue stopped');
  }
}
