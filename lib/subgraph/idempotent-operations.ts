import type { FormattedExecutionResult } from 'graphql';
import type { EntityManager } from '../data/database.js';
import {
  claimKey,
  completeKey,
  fingerprintOf,
  IDEMPOTENT_REPLAY_EXTENSION,
  idempotencyKeyOf,
  releaseKey,
  type IdempotencyScope,
} from '../data/idempotency.js';
import type { SubgraphOperation, SubgraphRequest } from './local-subgraph.js';
import type { AuthContext } from './shield.js';

/**
 * A subgraph's mutations under an `Idempotency-Key` (lib/data/idempotency.ts), the same way in
 * process and over HTTP: the request's entity manager runs the whole operation in one transaction,
 * in which the answer is recorded, so the services' own transactions nest in it (as savepoints)
 * and the write and its record commit together.
 */

/**
 * The key's scope, or undefined when the request has none. The caller is the credential's subject;
 * a request without credentials (the contacts service when open, a sign-in) is its client's address.
 */
export function idempotencyScopeOf(
  request: SubgraphRequest,
  operation: SubgraphOperation,
  contextValue: object,
): IdempotencyScope | undefined {
  const key = idempotencyKeyOf(request.headers);
  if (key === undefined) return undefined;
  const principal = (contextValue as Partial<AuthContext>).principal;
  const caller = principal ? `subject:${principal.userId}` : `client:${request.client ?? 'unknown'}`;
  return { caller, key, fingerprint: fingerprintOf(operation.query ?? '', operation.variables) };
}

/**
 * Runs `execute` once per key: a replay answers the recorded answer (marked with
 * `IDEMPOTENT_REPLAY_EXTENSION`) without running anything. `em` is the entity manager the
 * operation's context was made on; `claims` another one, for the statements that must not wait for
 * the operation's transaction. An answer with errors rolls everything back and frees the key.
 */
export async function runIdempotently(
  em: EntityManager,
  claims: EntityManager,
  scope: IdempotencyScope,
  execute: () => Promise<FormattedExecutionResult>,
): Promise<FormattedExecutionResult> {
  const claim = await claimKey(claims, scope);
  if (claim.kind === 'replay') {
    const answer = claim.answer as FormattedExecutionResult;
    return { ...answer, extensions: { ...answer.extensions, [IDEMPOTENT_REPLAY_EXTENSION]: true } };
  }
  let answer: FormattedExecutionResult;
  try {
    await em.begin();
    answer = await execute();
    // An answer with errors is not kept: what its work wrote stands as it would without a key (each
    // service rolls back its own failed change), and a retry runs again.
    if (!answer.errors?.length) await completeKey(em, scope, answer);
    await em.commit();
  } catch (error) {
    await rollBack(em);
    await releaseKey(claims, scope);
    throw error;
  }
  if (answer.errors?.length) await releaseKey(claims, scope);
  return answer;
}

async function rollBack(em: EntityManager): Promise<void> {
  if (em.isInTransaction()) await em.rollback();
}
