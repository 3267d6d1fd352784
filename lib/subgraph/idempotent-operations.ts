import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { HeaderMap, type ApolloServerPlugin, type BaseContext, type GraphQLResponse } from '@apollo/server';
import {
  GraphQLError,
  OperationTypeNode,
  type DocumentNode,
  type FormattedExecutionResult,
  type GraphQLFormattedError,
} from 'graphql';
import type { Principal } from '../identity.js';
import type { EntityManager } from '../data/database.js';
import {
  claimKey,
  completeKey,
  fingerprintOf,
  IDEMPOTENT_REPLAY_EXTENSION,
  idempotencyKeyOf,
  lockKey,
  releaseKey,
  stillRunningError,
  withheldAnswerError,
  type Claim,
  type IdempotencyScope,
} from '../data/idempotency.js';
import type { AuthContext, MutationRules } from './shield.js';

/**
 * A subgraph's mutations under an `Idempotency-Key` (lib/data/idempotency.ts), the same way in
 * process and over HTTP: the request's entity manager runs the whole operation in one transaction,
 * in which the key is locked and claimed and the answer recorded, so the services' own transactions
 * nest in it (as savepoints) and the claim, the write and its record commit together.
 */

/**
 * The key's scope, or undefined when the request has none. The caller is the credential, not only
 * its user: a record answers only a request that could have made it, never a weaker credential of
 * the same user (another API key, a token with fewer scopes). A request without credentials (the
 * contacts service when open, a sign-in) is its client's address.
 */
export function idempotencyScopeOf(
  request: { headers: IncomingHttpHeaders; client?: string },
  operation: { query?: string; variables?: Record<string, unknown> },
  contextValue: object,
): IdempotencyScope | undefined {
  const key = idempotencyKeyOf(request.headers);
  if (key === undefined) return undefined;
  const principal = (contextValue as Partial<AuthContext>).principal;
  const caller = principal ? callerOf(principal) : `client:${request.client ?? 'unknown'}`;
  return { caller, key, fingerprint: fingerprintOf(operation.query ?? '', operation.variables) };
}

/**
 * Who holds a record: an API key by its id (`api-key:<id>`); a token or a session by how it signs
 * in, its user and a digest of what it may do (`bearer:<user>:<digest>`), its sorted scopes and
 * brand reach, so the same user with other scopes or reach is another caller.
 */
function callerOf(principal: Principal): string {
  if (principal.via === 'api-key' && principal.apiKeyId) return `api-key:${principal.apiKeyId}`;
  const sorted = (values: ReadonlySet<string> | null | undefined) => (values ? [...values].sort() : null);
  const grant = createHash('sha256')
    .update(JSON.stringify([sorted(principal.scopes), sorted(principal.brandIds)]))
    .digest('base64url');
  return `${principal.via}:${principal.userId}:${grant}`;
}

/** The operation a key is claimed for, and its caller's context: what the shield's rules are asked about before a replay. */
export interface IdempotentRequest {
  document: DocumentNode;
  variables: Record<string, unknown> | undefined;
  contextValue: object;
}

/**
 * Runs `execute` once per key: a replay answers the recorded answer (marked with
 * `IDEMPOTENT_REPLAY_EXTENSION`) without running anything, once the shield's rules (`rules`) hold
 * for the caller. `em` is the entity manager the operation's context was made on. An answer with
 * errors frees the key.
 */
export async function runIdempotently(
  em: EntityManager,
  scope: IdempotencyScope,
  guard: { rules: MutationRules; request: IdempotentRequest },
  execute: () => Promise<FormattedExecutionResult>,
): Promise<FormattedExecutionResult> {
  const replay = await startIdempotently(em, scope, guard);
  if (replay) return replay;
  let answer: FormattedExecutionResult;
  try {
    answer = await execute();
  } catch (error) {
    await abandonIdempotently(em);
    throw error;
  }
  await finishIdempotently(em, scope, answer, guard.request.contextValue);
  return answer;
}

/**
 * Claims the key: the recorded answer to send instead of running the operation, or undefined when
 * the operation is to run, `em` now in the transaction it runs in, which holds the key's lock and
 * its claim. Throws the 409 of a key another request holds (its lock taken: it runs), the 409 or 422
 * of a key that cannot be used (lib/data/idempotency.ts `claimKey`), and, before anything recorded
 * is answered, the error the shield would answer this caller for the operation's root fields: a
 * replay never tells a caller what the same request sent afresh would refuse it.
 */
export async function startIdempotently(
  em: EntityManager,
  scope: IdempotencyScope,
  { rules, request }: { rules: MutationRules; request: IdempotentRequest },
): Promise<FormattedExecutionResult | undefined> {
  await em.begin();
  let claim: Claim;
  try {
    if (!(await lockKey(em, scope))) throw stillRunningError();
    claim = await claimKey(em, scope);
  } catch (error) {
    await em.rollback();
    throw error;
  }
  if (claim.kind === 'claimed') return undefined;
  // Nothing runs: the transaction had only the lock to hold.
  await em.rollback();
  const refusal = await rules(request.document, request.variables, request.contextValue);
  if (refusal) throw refusal;
  if (claim.kind === 'withheld') throw withheldAnswerError();
  const answer = claim.answer as FormattedExecutionResult;
  return { ...answer, extensions: { ...answer.extensions, [IDEMPOTENT_REPLAY_EXTENSION]: true } };
}

/**
 * Records the operation's answer in its transaction and commits them together. An answer with errors
 * is not kept: what its work wrote stands as it would without a key (each service rolls back its own
 * failed change), and the key is freed, so a retry runs again. An answer its resolver declared to
 * hold a secret shown once (`answerHoldsSecret`) is recorded as done without it.
 */
export async function finishIdempotently(
  em: EntityManager,
  scope: IdempotencyScope,
  answer: FormattedExecutionResult,
  contextValue: object,
): Promise<void> {
  try {
    if (answer.errors?.length) await releaseKey(em, scope);
    else await completeKey(em, scope, answer, { withheld: madeOnOf(contextValue)?.holdsSecret === true });
    await em.commit();
  } catch (error) {
    await abandonIdempotently(em);
    throw error;
  }
}

/** After a failure of the operation itself: nothing of it stays, the claim included, so the key is free again. */
export async function abandonIdempotently(em: EntityManager): Promise<void> {
  if (em.isInTransaction()) await em.rollback();
}

/**
 * What a context was made on: kept on the context itself under a symbol, since Apollo Server runs
 * an operation on a shallow copy of the context it was given (which copies the symbol along).
 */
const MADE_ON = Symbol('made on');

interface MadeOn {
  em: EntityManager;
  request: { headers: IncomingHttpHeaders; client?: string };
  /** Set by `answerHoldsSecret`: the answer is shown once and not kept for a replay. */
  holdsSecret?: boolean;
}

/** Records on a new context the entity manager and request it was made on. */
export function markMadeOn<Context extends object>(
  contextValue: Context,
  madeOn: Omit<MadeOn, 'holdsSecret'>,
): Context {
  return Object.assign(contextValue, { [MADE_ON]: { ...madeOn } });
}

/**
 * Declares, where a secret is made (a new API key, a signing secret, a session token), that this
 * request's answer holds it: shown this once, it is never kept for an Idempotency-Key's replay
 * (the keys and sessions are stored hashed, and their replay record would be a copy in clear). A
 * retry under the same key gets a 409 saying so and does not run again. Every mutation whose answer
 * carries a credential calls it, in all three services.
 */
export function answerHoldsSecret(contextValue: object): void {
  const made = madeOnOf(contextValue);
  if (made) made.holdsSecret = true;
}

function madeOnOf(contextValue: object): MadeOn | undefined {
  return (contextValue as { [MADE_ON]?: MadeOn })[MADE_ON];
}

/**
 * What a subgraph needs to run mutations under keys: a new entity manager for each (its context is
 * made on it, and the key is locked, claimed and recorded in its transaction), and its shield's rules
 * of the root mutation fields, asked before a replay.
 */
export interface IdempotentContexts {
  fork(): EntityManager;
  rules: MutationRules;
}

/**
 * The same for a subgraph served over HTTP (Apollo Server): the key is claimed once the operation
 * is known to be a mutation, a replay is answered without executing, and the answer is recorded and
 * committed just before it is sent. Placed after the plugins that add to the answer's extensions,
 * so that a replay carries them too.
 */
export function idempotencyPlugin<Context extends BaseContext>(
  contexts: IdempotentContexts,
  formatError: (error: GraphQLError) => GraphQLFormattedError,
): ApolloServerPlugin<Context> {
  return {
    async requestDidStart() {
      let running: { em: EntityManager; scope: IdempotencyScope; contextValue: object } | undefined;
      const answer = (result: FormattedExecutionResult): GraphQLResponse => ({
        http: { status: undefined, headers: new HeaderMap() },
        body: { kind: 'single', singleResult: result },
      });
      return {
        async responseForOperation({ operation, document, request, contextValue }) {
          const made = operation.operation === OperationTypeNode.MUTATION ? madeOnOf(contextValue) : undefined;
          if (!made) return null;
          try {
            const operationSent = { query: request.query, variables: request.variables };
            const scope = idempotencyScopeOf(made.request, operationSent, contextValue);
            if (!scope) return null;
            const guard = { rules: contexts.rules, request: { document, variables: request.variables, contextValue } };
            const replay = await startIdempotently(made.em, scope, guard);
            if (replay) return answer(replay);
            running = { em: made.em, scope, contextValue };
            return null;
          } catch (error) {
            return answer({ errors: [formatError(asGraphQLError(error))] });
          }
        },
        async willSendResponse({ response }) {
          if (!running || response.body.kind !== 'single') return;
          const { data, errors, extensions } = response.body.singleResult;
          const result = {
            ...(data !== undefined && { data }),
            ...(errors && { errors }),
            ...(extensions && { extensions }),
          };
          try {
            await finishIdempotently(running.em, running.scope, result, running.contextValue);
          } catch (error) {
            // Nothing was committed (finishIdempotently rolled back and freed the key): the answer is the failure.
            response.body.singleResult = { errors: [formatError(asGraphQLError(error))] };
          }
        },
      };
    },
  };
}

/**
 * A failure of a key's claim or commit as a GraphQL error: a refusal as it is; anything else (the
 * database out, a connection lost) wrapped, for `formatError` to answer as an outage (503) or mask.
 */
export function asGraphQLError(error: unknown): GraphQLError {
  if (error instanceof GraphQLError) return error;
  const originalError = error instanceof Error ? error : new Error(String(error));
  return new GraphQLError('Idempotent operation failed', { originalError });
}
