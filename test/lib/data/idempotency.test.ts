import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../../lib/config.js';
import { openDatabase, type Orm } from '../../../lib/data/database.js';
import { claimKey, fingerprintOf, sweepExpiredKeys } from '../../../lib/data/idempotency.js';
import { createLogger } from '../../../lib/observability/logger.js';
import { contactsEntities } from '../../../subgraphs/contacts/contacts.entities.js';
import { contactsMigrations } from '../../../subgraphs/contacts/migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../../support/platform.js';

describe('fingerprintOf', () => {
  const commit = 'mutation Commit($uploadToken: String!, $sha256: String!) { commit }';

  it('leaves out the variables naming an attempt of its own (an upload slot), and only those', () => {
    const asked = { sha256: 'ab', mapping: { a: 'email' } };
    expect(fingerprintOf(commit, { ...asked, uploadToken: 'first' })).toBe(
      fingerprintOf(commit, { uploadToken: 'retry', ...asked }),
    );
    expect(fingerprintOf(commit, { ...asked, uploadId: 'one' })).toBe(fingerprintOf(commit, asked));
    expect(fingerprintOf(commit, { ...asked, uploadToken: 'first' })).not.toBe(
      fingerprintOf(commit, { ...asked, sha256: 'cd', uploadToken: 'first' }),
    );
  });
});

describe('sweepExpiredKeys (PostgreSQL, or PGlite when TEST_DATABASE_URL is unset)', () => {
  let database: TestDatabase;
  let orm: Orm;
  let dataDir: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'idempotency-test-'));
    const config = loadConfig({
      ...(database.url ? { DATABASE_URL: database.url } : {}),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
    });
    orm = await openDatabase(config, createLogger(config), {
      service: 'contacts',
      entities: contactsEntities,
      migrations: contactsMigrations,
    });
  });
  afterAll(async () => {
    await orm?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("deletes every caller's expired records, and keeps the others", async () => {
    const em = orm.em.fork();
    for (const caller of ['client:gone', 'subject:gone', 'subject:here'])
      await claimKey(em, { caller, key: 'k', fingerprint: 'f' });
    await em.execute(
      `update contacts.idempotency_key set expires_at = now() - interval '1 minute' where caller like '%gone'`,
    );
    expect(await sweepExpiredKeys(em)).toBe(2);
    const kept = await em.execute<{ caller: string }[]>('select caller from contacts.idempotency_key');
    expect(kept.map((row) => row.caller)).toEqual(['subject:here']);
  });
});
