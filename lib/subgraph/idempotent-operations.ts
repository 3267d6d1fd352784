import type { IncomingHttpHeaders } from 'node:http';
import { HeaderMap, type ApolloServerPlugin, type BaseContext, type GraphQLResponse } from '@apollo/server';
import { GraphQLError, OperationTypeNode, type FormattedExecutionResult, type GraphQLFormattedError } from 'graphql';
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
  request: { headers: IncomingHttpHeaders; client?: string },
  operation: { query?: string; variables?: Record<string, unknown> },
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
 * the operation's transaction. An answer with errors frees the key.
 */
export async function runIdempotently(
  em: EntityManager,
  claims: EntityManager,
  scope: IdempotencyScope,
  execute: () => Promise<FormattedExecutionResult>,
): Promise<FormattedExecutionResult> {
  const replay = await startIdempotently(em, claims, scope);
  if (replay) return replay;
  let answer: FormattedExecutionResult;
  try {
    answer = await execute();
  } catch (error) {
    await abandonIdempotently(em, claims, scope);
    throw error;
  }
  await finishIdempotently(em, claims, scope, answer);
  return answer;
}

/**
 * Claims the key: the recorded answer to send instead of running the operation, or undefined when
 * the operation is to run, `em` now in the transaction it runs in. Throws the 409 or 422 of a key
 * that cannot be used (lib/data/idempotency.ts `claimKey`).
 */
export async function startIdempotently(
  em: EntityManager,
  claims: EntityManager,
  scope: IdempotencyScope,
): Promise<FormattedExecutionResult | undefined> {
  const claim = await claimKey(claims, scope);
  if (claim.kind === 'replay') {
    const answer = claim.answer as FormattedExecutionResult;
    return { ...answer, extensions: { ...answer.extensions, [IDEMPOTENT_REPLAY_EXTENSION]: true } };
  }
  await em.begin();
  return undefined;
}

/**
 * Records the operation's answer in its transaction and commits them together. An answer with errors
 * is not kept: what its work wrote stands as it would without a key (each service rolls back its own
 * failed change), and the key is freed, so a retry runs again.
 */
export async function finishIdempotently(
  em: EntityManager,
  claims: EntityManager,
  scope: IdempotencyScope,
  answer: FormattedExecutionResult,
): Promise<void> {
  try {
    if (!answer.errors?.length) await completeKey(em, scope, answer);
    await em.commit();
  } catch (error) {
    await abandonIdempotently(em, claims, scope);
    throw error;
  }
  if (answer.errors?.length) await releaseKey(claims, scope);
}

/** After a failure of the operation itself: nothing of it stays, and the key is free again. */
export async function abandonIdempotently(
  em: EntityManager,
  claims: EntityManager,
  scope: IdempotencyScope,
): Promise<void> {
  if (em.isInTransaction()) await em.rollback();
  await releaseKey(claims, scope);
}

/**
 * What a context was made on: kept on the context itself under a symbol, since Apollo Server runs
 * an operation on a shallow copy of the context it was given (which copies the symbol along).
 */
const MADE_ON = Symbol('made on');

interface MadeOn {
  em: EntityManager;
  request: { headers: IncomingHttpHeaders; client?: string };
}

/** Records on a new context the entity manager and request it was made on. */
export function markMadeOn<Context extends object>(contextValue: Context, madeOn: MadeOn): Context {
  return Object.assign(contextValue, { [MADE_ON]: madeOn });
}

function madeOnOf(contextValue: object): MadeOn | undefined {
  return (contextValue as { [MADE_ON]?: MadeOn })[MADE_ON];
}

/** How a subgraph served over HTTP makes the entity managers of the key's claims. */
export interface IdempotentContexts {
  fork(): EntityManager;
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
      let running: { em: EntityManager; claims: EntityManager; scope: IdempotencyScope } | undefined;
      const answer = (result: FormattedExecutionResult): GraphQLResponse => ({
        http: { status: undefined, headers: new HeaderMap() },
        body: { kind: 'single', singleResult: result },
      });
      return {
        async responseForOperation({ operation, request, contextValue }) {
          const made = operation.operation === OperationTypeNode.MUTATION ? madeOnOf(contextValue) : undefined;
          if (!made) return null;
          try {
            const operationSent = { query: request.query, variables: request.variables };
            const scope = idempotencyScopeOf(made.request, operationSent, contextValue);
            if (!scope) return null;
            const claims = contexts.fork();
            const replay = await startIdempotently(made.em, claims, scope);
            if (replay) return answer(replay);
            running = { em: made.em, claims, scope };
            return null;
          } catch (error) {
            if (!(error instanceof GraphQLError)) throw error;
            return answer({ errors: [formatError(error)] });
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
          await finishIdempotently(running.em, running.claims, running.scope, result);
        },
      };
    },
  };
}
