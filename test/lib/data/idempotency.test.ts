import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Orm } from '#lib/data/database.js';
import { parse } from 'graphql';
import { AppError, ErrorCode } from '#lib/errors.js';
import { claimKey, fingerprintOf, IDEMPOTENT_REPLAY_EXTENSION, sweepExpiredKeys } from '#lib/data/idempotency.js';
import { abandonIdempotently, finishIdempotently, startIdempotently } from '#lib/subgraph/idempotent-operations.js';
import { openContactsDatabase, type ContactsDatabase } from '#test/support/contacts-database.js';

const describePostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

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

describe('idempotency records (PostgreSQL, or PGlite when TEST_DATABASE_URL is unset)', () => {
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

  describePostgres('a key while its request runs, and after it ended without an answer (two connections)', () => {
    const scope = { caller: 'client:198.51.100.7', key: 'retry-after-crash', fingerprint: 'f' };
    const guard = {
      rules: () => Promise.resolve(undefined),
      request: { document: parse('mutation { save }'), variables: {}, contextValue: {} },
    };
    const code = (error: unknown) => (error as AppError).code;

    it('answers 409 at once while it runs, commits nothing a crash would leave, and lets a retry run once it ended', async () => {
      const holder = orm.em.fork();
      expect(await startIdempotently(holder, scope, guard)).toBeUndefined();

      const asked = Date.now();
      const whileRunning = await startIdempotently(orm.em.fork(), scope, guard).catch((error: unknown) => error);
      expect(code(whileRunning)).toBe(ErrorCode.CONFLICT);
      expect(Date.now() - asked).toBeLessThan(1_000);
      // The claim is in the holder's transaction only: were its process killed now, nothing of it would stay.
      const committed = await orm.em
        .fork()
        .execute<{ key: string }[]>(`select key from contacts.idempotency_key where key = ?`, [scope.key]);
      expect(committed).toEqual([]);

      // Its transaction ends without a commit, as PostgreSQL ends the transaction of a connection that drops.
      await holder.rollback();
      const retry = orm.em.fork();
      expect(await startIdempotently(retry, scope, guard)).toBeUndefined();
      await finishIdempotently(retry, scope, { data: { save: true } }, {});

      const replay = await startIdempotently(orm.em.fork(), scope, guard);
      expect(replay).toEqual({ data: { save: true }, extensions: { [IDEMPOTENT_REPLAY_EXTENSION]: true } });
    });

    it('frees the key of an answer with errors and of work that threw, and keeps it locked for nobody', async () => {
      const failing = { ...scope, key: 'fails' };
      const first = orm.em.fork();
      await startIdempotently(first, failing, guard);
      await finishIdempotently(first, failing, { errors: [{ message: 'refused' }] }, {});
      const second = orm.em.fork();
      expect(await startIdempotently(second, failing, guard)).toBeUndefined();
      await abandonIdempotently(second);
      const third = orm.em.fork();
      expect(await startIdempotently(third, failing, guard)).toBeUndefined();
      await abandonIdempotently(third);
      const kept = await orm.em
        .fork()
        .execute<{ key: string }[]>(`select key from contacts.idempotency_key where key = 'fails'`);
      expect(kept).toEqual([]);
    });
  });
});
