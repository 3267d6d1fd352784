import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  DataloaderType,
  type AnyEntity,
  type Constructor,
  type EntityClass,
  type LoggerNamespace,
} from '@mikro-orm/core';
import { ReflectMetadataProvider } from '@mikro-orm/decorators/legacy';
import { Migration, Migrator } from '@mikro-orm/migrations';
import type { PostgreSqlDriver } from '@mikro-orm/postgresql';
import type { MikroORM, SqlEntityManager } from '@mikro-orm/sql';
import type { PGlite } from '@electric-sql/pglite';
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.js';
import { holdDataDir } from './data-dir-lock.js';
import { registerEmbeddedDatabase } from './embedded-backup.js';
import { observeDatabase } from '../observability/database-telemetry.js';
import type { Logger } from '../observability/logger.js';

export type EntityManager = SqlEntityManager;
export type Orm = MikroORM;
export { Migration };

export interface DatabaseOptions {
  /** The service's name; also its PostgreSQL schema. */
  service: 'contacts' | 'social' | 'surveys';
  entities: EntityClass<AnyEntity>[];
  /** Hand-written migrations, oldest first. The schema is never synced from entities. */
  migrations: Constructor<Migration>[];
  /** Observe every SQL statement (tests count them to pin "no N+1"). */
  onQuery?: (sql: string) => void;
  /**
   * What to do about migrations not run yet: `migrate` runs them, `require-current` refuses a database
   * behind this code, `as-is` leaves it (`npm run migrate -- --check` lists them). Unset: `migrate`
   * with `MIGRATE_ON_START=true` (the default), else `require-current`.
   */
  schema?: 'migrate' | 'require-current' | 'as-is';
}

/** A part with `MIGRATE_ON_START=false` found its database behind its code (an empty one included). */
export class DatabaseBehindError extends Error {
  constructor(service: string, pending: string[]) {
    super(
      `the ${service} database is behind this release: ${pending.length} migrations not run (${pending.join(', ')}). ` +
        'MIGRATE_ON_START=false leaves migrating to `npm run migrate`: run it (the migration Job or service), then start this part again',
    );
    this.name = 'DatabaseBehindError';
  }
}

/** The names of `orm`'s migrations not run yet on its database, oldest first. */
export async function pendingMigrations(orm: Orm, service: string): Promise<string[]> {
  return (await orm.migrator.getPending({ schema: service })).map((migration) => migration.name);
}

/**
 * Opens the service's database and brings it up to date.
 *
 * `DATABASE_URL` set: that PostgreSQL server, the service in its own schema. Unset: an embedded
 * PGlite cluster under `DATA_DIR/pglite/<service>`, so the platform runs with no server at all and
 * keeps its data across restarts; one process at a time (lib/data/data-dir-lock.ts). Either way the same migrations run before anything is served.
 */
export async function openDatabase(config: Config, logger: Logger, options: DatabaseOptions): Promise<Orm> {
  const { service } = options;
  const log = logger.child({ component: `${service}-db` });
  const common = {
    entities: options.entities,
    schema: service,
    metadataProvider: ReflectMetadataProvider,
    extensions: [Migrator],
    // References and collections loaded in a loop are batched into one query per tick.
    dataloader: DataloaderType.ALL,
    discovery: { warnWhenNoEntities: false },
    allowGlobalContext: false,
    forceUtcTimezone: true,
    debug: options.onQuery ? (['query'] as LoggerNamespace[]) : false,
    logger: options.onQuery ? (message: string) => options.onQuery?.(message) : (message: string) => log.debug(message),
    migrations: {
      migrationsList: options.migrations,
      schema: service,
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      snapshotOnMigrate: false,
      silent: true,
    },
  };

  let orm: Orm;
  if (config.env.DATABASE_URL) {
    const { MikroORM } = await import('@mikro-orm/postgresql');
    const { BoundPostgreSqlDriver, PreparingClient } = await import('./postgresql.js');
    orm = await MikroORM.init<PostgreSqlDriver>({
      ...common,
      // Bind parameters and named prepared statements instead of values written into the SQL (lib/data/postgresql.ts).
      driver: BoundPostgreSqlDriver,
      driverOptions: { Client: PreparingClient },
      clientUrl: config.env.DATABASE_URL,
      pool: { min: 0, max: config.env.DATABASE_POOL_MAX },
    });
  } else {
    // Loaded here, not at the top: a process on PostgreSQL never needs PGlite's code.
    const [{ MikroORM }, { PGlite }, { pg_trgm }, { unaccent }, { btree_gist }] = await Promise.all([
      import('@mikro-orm/pglite'),
      import('@electric-sql/pglite'),
      import('@electric-sql/pglite/contrib/pg_trgm'),
      import('@electric-sql/pglite/contrib/unaccent'),
      import('@electric-sql/pglite/contrib/btree_gist'),
    ]);
    const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`];
    const dataDir = path.join(config.dataDir, 'pglite', service);
    mkdirSync(dataDir, { recursive: true });
    const release = holdDataDir(config.dataDir);
    try {
      if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
        // Creating a cluster is most of a first start: a newcomer is told it happens once.
        log.info({ dataDir }, 'creating the embedded database (first start on this DATA_DIR, a few seconds, once)');
        await copyEmptyCluster(config.dataDir, dataDir);
      }
      // The contrib extensions a migration creates (contacts' duplicate matching) must be bundled in
      // before it runs; every part and command that opens a service's database opens it here.
      const extensions = { pg_trgm, unaccent, btree_gist };
      orm = await MikroORM.init({ ...common, dbName: dataDir, driverOptions: { startParams, extensions } });
    } catch (error) {
      release();
      throw error;
    }
    // Backups of the running platform go through this process, the only one that may open the database.
    const unregister = registerEmbeddedDatabase(config.dataDir, service, embeddedDump(orm));
    // The lock goes with the database: whoever closes it (a part, the platform, a command) frees the folder.
    const close = orm.close.bind(orm);
    orm.close = async (force?: boolean) => {
      try {
        await unregister();
        await close(force);
      } finally {
        release();
      }
    };
  }

  observeDatabase(orm, service, Boolean(config.env.DATABASE_URL));
  const schema = options.schema ?? (config.env.MIGRATE_ON_START === 'true' ? 'migrate' : 'require-current');
  try {
    if (schema === 'migrate') {
      await withMigrationLock(config.env.DATABASE_URL, service, async () => {
        await orm.em.getConnection().execute(`create schema if not exists "${service}"`);
        await orm.migrator.up();
      });
    } else if (schema === 'require-current') {
      // In a rolling upgrade the release's migrations run once, in their own step, before its parts start.
      const pending = await pendingMigrations(orm, service);
      if (pending.length) throw new DatabaseBehindError(service, pending);
    }
  } catch (error) {
    // A start that is tried again (the database not up yet) must not leave a pool behind per try.
    await orm.close().catch(() => undefined);
    throw error;
  }
  log.info({ migrations: options.migrations.length }, 'database ready');
  return orm;
}

/**
 * A consistent tarball of an embedded database's data folder, taken while it runs: PGlite's
 * `dumpDataDir`, under the lock MikroORM's Kysely dialect holds for each statement or transaction on
 * PGlite's one connection, so nothing the platform runs lands in the middle of it.
 */
function embeddedDump(orm: Orm): () => Promise<Blob> {
  const connection = orm.em.getConnection();
  const kysely = connection.getClient<Kysely<unknown>>();
  return async () => {
    const pglite = await (connection as unknown as { getNativeClient(): Promise<PGlite> }).getNativeClient();
    return kysely.connection().execute(() => pglite.dumpDataDir('none'));
  };
}

/**
 * PostgreSQL settings an embedded cluster starts with. PGlite keeps shared_buffers at initdb's
 * 128 MB, and the WASM instance touches all of it at start: three clusters in one process were
 * 850 MB resident before serving anything, 264 MB with 16 MB each; a whole start was about 620 MB
 * with 16 MB and 570 MB with 8 MB (4 MB measured no lower). A WASM memory never shrinks, so what a
 * cluster takes it keeps. A small pool costs little here: a miss is a read from the operating
 * system's page cache, and one connection needs few pages pinned at once. The rest (work_mem,
 * wal_buffers, max_connections, temp_buffers) moved nothing measurable and keeps PostgreSQL's values.
 */
export const EMBEDDED_SHARED_BUFFERS = '8MB';

/** The empty cluster of each DATA_DIR this process is creating: the three services ask for it at once. */
const emptyClusters = new Map<string, Promise<string>>();

/**
 * Makes `target` a new embedded cluster, a copy of one empty cluster per DATA_DIR (kept in
 * `pglite/.empty`). PGlite's initdb takes about 3 s per cluster, 4.7 s for the three services at
 * once on two cores, where one initdb and two copies (0.1 s each) take 3.3 s. The empty cluster is
 * closed cleanly before it is copied, so a copy is as good as a cluster of its own. Called holding
 * the DATA_DIR's lock: no other process creates it meanwhile.
 */
async function copyEmptyCluster(dataDir: string, target: string): Promise<void> {
  const empty = path.join(dataDir, 'pglite', '.empty');
  let creating = emptyClusters.get(empty);
  if (!creating) {
    creating = createEmptyCluster(empty);
    emptyClusters.set(empty, creating);
    // A failed attempt (a full disk) is not remembered: the next start tries again.
    creating.catch(() => emptyClusters.delete(empty));
  }
  cpSync(await creating, target, { recursive: true });
}

async function createEmptyCluster(empty: string): Promise<string> {
  if (existsSync(path.join(empty, 'PG_VERSION'))) return empty;
  // Built aside and renamed, so that a process killed meanwhile leaves no half cluster to copy.
  const building = `${empty}.creating`;
  rmSync(building, { recursive: true, force: true });
  const { MikroORM } = await import('@mikro-orm/pglite');
  const orm = await MikroORM.init({
    dbName: building,
    entities: [],
    discovery: { warnWhenNoEntities: false },
  });
  await orm.em.getConnection().execute('select 1');
  await orm.close(true);
  renameSync(building, empty);
  return empty;
}

/** The name of the advisory lock that one service's migrations run under (hashed to PostgreSQL's 64-bit key). */
export function migrationLockName(service: DatabaseOptions['service']): string {
  return `platform.migrations.${service}`;
}

/**
 * Runs `migrate` holding a PostgreSQL advisory lock of the service's own, so parts that start
 * together (replicas, the worker, the migrate Job) never race: the first migrates, the others wait
 * and then find nothing left to do. The lock lives on a connection of its own, apart from the ORM's
 * pool, and PostgreSQL drops it with that session if the process dies mid-way. Embedded PGlite
 * belongs to a single process: nothing to serialise there.
 */
export async function withMigrationLock(
  databaseUrl: string | undefined,
  service: DatabaseOptions['service'],
  migrate: () => Promise<void>,
): Promise<void> {
  if (!databaseUrl) return migrate();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock(hashtextextended($1, 0))', [migrationLockName(service)]);
    await migrate();
  } finally {
    // Ending the session releases the lock.
    await client.end();
  }
}

/** True when the database answers a trivial query; used by readiness probes. */
export async function databaseAnswers(orm: Orm): Promise<boolean> {
  try {
    await orm.em.getConnection().execute('select 1');
    return true;
  } catch {
    return false;
  }
}
