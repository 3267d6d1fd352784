import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Orm } from '#lib/data/database.js';
import { claimKey, fingerprintOf, sweepExpiredKeys } from '#lib/data/idempotency.js';
import { openContactsDatabase, type ContactsDatabase } from '#test/support/contacts-database.js';

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

  it('keeps the upload slot when the request does not name its bytes: another upload is another request', () => {
    const bare = 'mutation Commit($uploadToken: String!) { commit }';
    expect(fingerprintOf(bare, { uploadToken: 'first' })).toBe(fingerprintOf(bare, { uploadToken: 'first' }));
    expect(fingerprintOf(bare, { uploadToken: 'first' })).not.toBe(fingerprintOf(bare, { uploadToken: 'second' }));
    expect(fingerprintOf(commit, { uploadToken: 'first', sha256: null })).not.toBe(
      fingerprintOf(commit, { uploadToken: 'second', sha256: null }),
    );
  });
});

describe('sweepExpiredKeys (PostgreSQL, or PGlite when TEST_DATABASE_URL is unset)', () => {
  let database: ContactsDatabase;
  let orm: Orm;

  beforeAll(async () => {
    database = await openContactsDatabase();
    orm = database.orm;
  });
  afterAll(() => database?.close());

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
