import { randomUUID } from 'node:crypto';
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { PgBoss, fromPglite } from 'pg-boss';
import type { Db as IDatabase, PGliteLike, Queue } from 'pg-boss';
import type { Config } from '../config.js';
import type { Logger } from '../observability/logger.js';
import type { EntityManager, Orm } from './database.js';

type AnyKysely = Kysely<unknown> | Transaction<unknown>;

/** The queue settings a service declares for each of its queues. */
export type QueueOptions = Pick<
  Queue,
  'retryLimit' | 'retryDelay' | 'retryBackoff' | 'expireInSeconds' | 'heartbeatSeconds'
>;

/** The connections a job queue opens of its own: its pool on PostgreSQL, none on embedded PGlite (it shares the ORM's). */
export function jobQueueConnections(config: Config): number {
  return config.env.DATABASE_URL ? config.env.JOB_POOL_MAX : 0;
}

/** How often pg-boss looks for jobs whose heartbeat stopped (it also runs its maintenance then). */
const SUPERVISION = { superviseIntervalSeconds: 10, monitorIntervalSeconds: 10 };

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
 * A service's job queues: pg-boss in the service's own database (its own schema, `<service>_jobs`),
 * on PostgreSQL with a small pool of its own, on embedded PGlite over the service's one connection.
 * Each queue is made with the service's settings, or brought to them when an earlier release made it.
 */
export async function startJobBoss(
  config: Config,
  orm: Orm,
  options: { schema: string; applicationName: string; queues: Record<string, QueueOptions>; logger: Logger },
): Promise<PgBoss> {
  const boss = config.env.DATABASE_URL
    ? new PgBoss({
        connectionString: config.env.DATABASE_URL,
        schema: options.schema,
        max: config.env.JOB_POOL_MAX,
        application_name: options.applicationName,
        ...SUPERVISION,
      })
    : new PgBoss({ db: await embeddedDb(orm), schema: options.schema, backend: 'pglite', ...SUPERVISION });
  boss.on('error', (error) => options.logger.error({ err: error }, 'job queue error'));
  await boss.start();
  for (const [name, settings] of Object.entries(options.queues)) {
    if (!(await boss.getQueue(name))) {
      await boss.createQueue(name, settings).catch(async (error) => {
        // Another process made it a moment ago.
        if (!(await boss.getQueue(name))) throw error;
      });
    } else {
      await boss.updateQueue(name, settings);
    }
    // Fill pg-boss's queue cache now: a cache miss later would query outside the caller's transaction.
    await boss.getJobById(name, randomUUID());
  }
  return boss;
}
