import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { PROJECT_ROOT } from '#lib/paths.js';
import { freePort } from '#test/support/ports.js';
import { createTestDatabase, type TestDatabase } from '#test/support/platform.js';

interface Finished {
  code: number | null;
  output: string;
}

/**
 * A built script with `args` and only `env`; `until` (when given) is the output at which the process has
 * started and is stopped (SIGTERM). Its exit code and everything it wrote.
 */
function run(script: string, args: string[], env: Record<string, string>, until?: string): Promise<Finished> {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'dist', 'scripts', `${script}.js`), ...args], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    if (until && output.includes(until)) child.kill('SIGTERM');
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

/** Rolling upgrades: the parts leave migrating to one step of its own and refuse a database behind them. */
describe('MIGRATE_ON_START=false and npm run migrate -- --check', () => {
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'migrate-on-start-'));
    env = { DATA_DIR: dataDir, ...(database.url ? { DATABASE_URL: database.url } : {}) };
  });
  afterAll(async () => {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const startContacts = async (extra: Record<string, string>) =>
    run(
      'part',
      ['contacts-subgraph'],
      { ...env, CONTACTS_SUBGRAPH_PORT: String(await freePort()), METRICS_PORT: '0', ...extra },
      'listening on',
    );

  it('lists every pending migration and exits 1 on an empty database, and a part refuses it naming npm run migrate', async () => {
    const check = await run('migrate', ['--check'], env);
    expect(check.code).toBe(1);
    for (const service of ['social', 'surveys', 'contacts'])
      expect(check.output).toMatch(new RegExp(`pending ${service} Migration\\d+`));

    const refused = await startContacts({ MIGRATE_ON_START: 'false' });
    expect(refused.code).toBe(1);
    expect(refused.output).toContain('the contacts database is behind this release');
    expect(refused.output).toContain('npm run migrate');
    expect(refused.output).not.toContain('listening on');
  });

  it('migrates with npm run migrate, after which --check is clean and the part starts without migrating', async () => {
    expect((await run('migrate', [], env)).code).toBe(0);
    const check = await run('migrate', ['--check'], env);
    expect(check).toMatchObject({ code: 0 });
    expect(check.output).toContain('every database is up to date');
    const started = await startContacts({ MIGRATE_ON_START: 'false' });
    expect(started.output).toContain('listening on');
  });

  it('names the one migration a database lacks', async () => {
    if (!database.url) return; // the embedded database is asked through the scripts only
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        'delete from contacts.mikro_orm_migrations where id = (select max(id) from contacts.mikro_orm_migrations) returning name',
      );
      const check = await run('migrate', ['--check'], env);
      expect(check.code).toBe(1);
      expect(check.output.split('\n').filter((line) => line.startsWith('pending '))).toEqual([
        `pending contacts ${rows[0].name}`,
      ]);
    } finally {
      await admin.end();
    }
  });
});
