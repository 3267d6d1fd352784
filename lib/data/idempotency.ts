import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { AppError, ErrorCode } from '../errors.js';
import type { EntityManager } from './database.js';

/**
 * Idempotency keys (the `Idempotency-Key` header, Stripe's semantics): a mutation sent again with
 * the same key by the same caller within 24 hours answers the first answer again and does nothing;
 * with the same key but another operation or other variables it is refused (422); while the first
 * is still running, a 409.
 *
 * The records live in the service's own database, beside the rows the mutation writes, and the
 * record of an answer is written in the mutation's own transaction (lib/subgraph runs the whole
 * operation in one, `runIdempotently`): the write and its record commit together or not at all, so
 * no crash can leave a write without its record (which a retry would repeat) or a record without
 * its write (which a retry would replay though nothing happened). The claim is made in that
 * transaction too, under a transaction-scoped advisory lock on the key (`lockKey`): a concurrent
 * retry finds the lock held and is told 409 at once, and a claim whose process died goes with its
 * transaction, which PostgreSQL rolls back when the connection drops, so a client's retry after a
 * crash runs at once. (The previous release committed its claims apart, with a lease: such a claim
 * still answers 409 until its lease ends, and is taken over then.)
 *
 * An answer that holds a secret shown once (a new API key, a signing secret, a session) is never
 * kept: its record is done without an answer (`answer` null), so a retry neither runs the work
 * again nor sees the secret again, but is told so (409). Records are kept per credential (the
 * caller, lib/subgraph/idempotent-operations.ts `idempotencyScopeOf`).
 */

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** The extension of an answer that is the replay of an earlier one (a REST adapter sends `Idempotent-Replayed: true`). */
export const IDEMPOTENT_REPLAY_EXTENSION = 'idempotentReplay';

/** How long a key answers the same: Stripe's 24 hours, long enough for any client's retries. */
export const IDEMPOTENCY_WINDOW = '24 hours';

/**
 * How long a claim committed apart (by the previous release) holds before another request may take it
 * over: far longer than any mutation runs. Claims made in the work's transaction need none.
 */
const CLAIM_LEASE = '10 minutes';

const MAX_KEY_LENGTH = 255;

/** Who sent a key, which key, and what for (the operation and its variables, hashed). */
export interface IdempotencyScope {
  caller: string;
  key: string;
  fingerprint: string;
}

/** The `Idempotency-Key` a request carries (undefined without one), or a 400 naming the header when it is not a usable key. */
export function idempotencyKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const value = headers[IDEMPOTENCY_KEY_HEADER];
  if (value === undefined) return undefined;
  const key = Array.isArray(value) ? value[0] : value;
  if (!key || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw AppError.badInput('Idempotency-Key', `must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters`);
  }
  return key;
}

/** JSON with object members in one order, so that the same variables hash the same however a client ordered them. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((name) => [name, canonical((value as Record<string, unknown>)[name])]),
  );
}

/**
 * Variables that name this attempt's own reservation rather than what was asked: the slot an upload's
 * bytes were staged in (lib/storage/uploads.ts), new on every attempt. A retry of the same upload
 * (the REST adapters reserve again on every attempt) differs in them only, so they are left out of
 * the fingerprint, but only when the request names its bytes by `CONTENT_DIGEST_VARIABLE`: the
 * commit checks the staged bytes against that digest (refusing others), so it stands for the upload
 * in the fingerprint. Without it the reservation itself is what tells one upload from another, and
 * it stays: a commit of another upload under the same key is then another request (422), never a
 * replay of the first's answer.
 */
export const PER_ATTEMPT_VARIABLES: readonly string[] = ['uploadToken', 'uploadId'];

/** The variable of an upload's commit that names its bytes (SHA-256, hex), checked by the commit. */
export const CONTENT_DIGEST_VARIABLE = 'sha256';

/** What the request asks, hashed: the operation's text and its variables (but `PER_ATTEMPT_VARIABLES` of an upload named by its digest). */
export function fingerprintOf(query: string, variables: Record<string, unknown> | undefined): string {
  const namesItsBytes = typeof variables?.[CONTENT_DIGEST_VARIABLE] === 'string';
  const asked = Object.fromEntries(
    Object.entries(variables ?? {}).filter(([name]) => !(namesItsBytes && PER_ATTEMPT_VARIABLES.includes(name))),
  );
  return createHash('sha256')
    .update(query)
    .update('\0')
    .update(JSON.stringify(canonical(asked)))
    .digest('base64url');
}

/** The migration statements of the records' table. */
export function idempotencySql(): string[] {
  return [
    `create table idempotency_key (
      caller text not null,
      key text not null,
      fingerprint text not null,
      state text not null check (state in ('running', 'done')),
      answer jsonb,
      lease_until timestamptz not null,
      expires_at timestamptz not null,
      primary key (caller, key)
    )`,
    'create index idempotency_key_expiry_idx on idempotency_key (expires_at)',
  ];
}

/** The records' table in the service's schema (the ORM's `schema`: statements here name it, as the ORM's own do). */
function table(em: EntityManager): string {
  return `"${em.config.get('schema') ?? 'public'}".idempotency_key`;
}

/**
 * What a claim found: the key is this request's now; or the first answer to replay; or the first
 * request is done but its answer held a secret shown once, which was not kept (`withheld`).
 */
export type Claim = { kind: 'claimed' } | { kind: 'replay'; answer: unknown } | { kind: 'withheld' };

/** The 409 of a retry whose first answer held a secret shown once, which is not kept. */
export function withheldAnswerError(): AppError {
  return new AppError(
    ErrorCode.CONFLICT,
    'The request with this Idempotency-Key was done, but its answer held a secret shown once and is not kept; it will not run again',
    {
      fields: [
        {
          field: 'Idempotency-Key',
          message: 'was used by a request done once whose answer held a secret that is not kept',
        },
      ],
    },
  );
}

/** The 409 of a retry while the first request under its key still runs. */
export function stillRunningError(): AppError {
  return new AppError(
    ErrorCode.CONFLICT,
    'A request with this Idempotency-Key is still running; retry once it has answered',
    { fields: [{ field: 'Idempotency-Key', message: 'is in use by a request still running' }] },
  );
}

/**
 * Takes the key's advisory lock for the rest of `tx`'s transaction, or answers false when another
 * transaction holds it: a request under the same key is running. Held until commit or rollback, and
 * given up by PostgreSQL when the connection drops, so a dead process never holds a key. Named by the
 * schema too: the services may share one database, each with its own keys.
 */
export async function lockKey(tx: EntityManager, scope: IdempotencyScope): Promise<boolean> {
  const [row] = await tx.execute<{ locked: boolean }[]>(
    'select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as locked',
    [[table(tx), scope.caller, scope.key].join('\n')],
  );
  return row?.locked === true;
}

/**
 * Claims the key for this request, in the transaction of `em` when it has one (the work's, under
 * `lockKey`), or says why not: the first answer to replay, a 422 for another request under the same
 * key, a 409 while a claim the previous release committed apart still holds. An expired record, or
 * such a claim whose lease ended for the same request, is taken over.
 */
export async function claimKey(em: EntityManager, scope: IdempotencyScope): Promise<Claim> {
  const [claimed] = await em.execute<{ key: string }[]>(
    `insert into ${table(em)} as kept (caller, key, fingerprint, state, lease_until, expires_at)
     values (?, ?, ?, 'running', now() + interval '${CLAIM_LEASE}', now() + interval '${IDEMPOTENCY_WINDOW}')
     on conflict (caller, key) do update
       set fingerprint = excluded.fingerprint, state = 'running', answer = null,
           lease_until = excluded.lease_until, expires_at = excluded.expires_at
       where kept.expires_at < now()
          or (kept.state = 'running' and kept.lease_until < now() and kept.fingerprint = excluded.fingerprint)
     returning kept.key`,
    [scope.caller, scope.key, scope.fingerprint],
  );
  if (claimed) return { kind: 'claimed' };
  const [kept] = await em.execute<{ fingerprint: string; state: string; answer: unknown }[]>(
    `select fingerprint, state, answer from ${table(em)} where caller = ? and key = ?`,
    [scope.caller, scope.key],
  );
  if (kept && kept.fingerprint !== scope.fingerprint) {
    throw new AppError(
      ErrorCode.UNPROCESSABLE_CONTENT,
      'This Idempotency-Key was already used with another request; use a new key for a new request',
      { fields: [{ field: 'Idempotency-Key', message: 'was already used with another request' }] },
    );
  }
  if (kept?.state === 'done')
    return kept.answer === null ? { kind: 'withheld' } : { kind: 'replay', answer: kept.answer };
  throw stillRunningError();
}

/**
 * Records the answer, in the transaction of the work that made it (`tx`): they commit together.
 * `withheld` (an answer holding a secret shown once) records the request as done with no answer. The
 * caller's expired records go meanwhile, so the table holds about a day of each caller's keys.
 */
export async function completeKey(
  tx: EntityManager,
  scope: IdempotencyScope,
  answer: unknown,
  { withheld = false }: { withheld?: boolean } = {},
): Promise<void> {
  await tx.execute(`delete from ${table(tx)} where caller = ? and expires_at < now()`, [scope.caller]);
  await tx.execute(
    `update ${table(tx)} set state = 'done', answer = ? where caller = ? and key = ? and state = 'running'`,
    [withheld ? null : JSON.stringify(answer), scope.caller, scope.key],
  );
}

/**
 * Gives the key back after work that answered errors: a failure is not an answer to keep, so a retry
 * with the same key runs again. Expired records of the caller go with it. (Work that threw needs
 * none of this: its transaction, and the claim in it, is rolled back.)
 */
export async function releaseKey(em: EntityManager, scope: IdempotencyScope): Promise<void> {
  await em.execute(
    `delete from ${table(em)} where caller = ? and ((key = ? and state = 'running') or expires_at < now())`,
    [scope.caller, scope.key],
  );
}

/**
 * Deletes every caller's expired records (each service's periodic sweep runs it): `completeKey` and
 * `releaseKey` clear a caller's own only when that caller sends a key again, and a caller who never
 * comes back would otherwise keep theirs for ever. Answers how many went.
 */
export async function sweepExpiredKeys(em: EntityManager): Promise<number> {
  const { affectedRows } = await em.execute<{ affectedRows: number }>(
    `delete from ${table(em)} where expires_at < now()`,
    [],
    'run',
  );
  return affectedRows;
}
