import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { migrationLockName } from '#lib/data/database.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { createTestDatabase, type TestDatabase } from '#test/support/platform.js';

interface Finished {
  code: number | null;
  output: string;
}

/** `node dist/scripts/migrate.js`, as the Kubernetes Job and the compose `migrate` service run it. */
function runMigrate(databaseUrl: string): Promise<Finished> {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'dist', 'scripts', 'migrate.js')], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

async function waitUntil(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting: ${what}`);
}

// Processes share a database only on a PostgreSQL server: embedded PGlite belongs to one process.
const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

onPostgres('migrations when several processes start together', () => {
  let database: TestDatabase;
  let admin: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await database?.drop();
  });

  /** Advisory locks in this suite's database only (suites run side by side on one server). */
  const ADVISORY_HERE = `locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())`;
  const scalar = async (sql: string, values: unknown[] = []) =>
    (await admin.query(sql, values)).rows[0].value as string | number;

  it('wait on the advisory lock, then one migrates and the other finds nothing to do', async () => {
    // Hold the social lock so both processes are certainly running at once when they reach it.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await holder.query('select pg_advisory_lock(hashtextextended($1, 0))', [migrationLockName('social')]);
    const both = Promise.all([runMigrate(database.url!), runMigrate(database.url!)]);
    try {
      await waitUntil(
        async () =>
          Number(await scalar(`select count(*)::int as value from pg_locks where ${ADVISORY_HERE} and not granted`)) ===
          2,
        'both processes waiting on the migration lock',
      );
      // Nothing was touched while the lock was held by someone else.
      expect(await scalar(`select count(*)::int as value from pg_namespace where nspname = 'social'`)).toBe(0);
    } finally {
      await holder.end();
    }
    const results = await both;
    expect(results.map((result) => result.code)).toEqual([0, 0]);

    for (const service of ['social', 'surveys', 'contacts']) {
      const applied = await admin.query(
        `select name, count(*)::int as times from ${service}.mikro_orm_migrations group by name`,
      );
      expect(applied.rows.length).toBeGreaterThan(0);
      expect(applied.rows.every((row) => row.times === 1)).toBe(true);
    }
    // Nothing is left holding the lock once they are done.
    expect(await scalar(`select count(*)::int as value from pg_locks where ${ADVISORY_HERE}`)).toBe(0);
  });

  it('exits 0 with nothing to do on an up-to-date database, and 1 naming the problem when it cannot migrate', async () => {
    expect((await runMigrate(database.url!)).code).toBe(0);
    const url = new URL(database.url!);
    url.pathname = '/no_such_database_here';
    const failed = await runMigrate(url.toString());
    expect(failed.code).toBe(1);
    expect(failed.output).toMatch(/Migrations failed:.*no_such_database_here/);
  });
});
