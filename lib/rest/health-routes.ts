import { randomUUID } from 'node:crypto';
import { ErrorCode, problemFor } from '../errors.js';
import type { GraphQLClient } from './graphql-client.js';
import { CACHE_CONTROL } from '../http/http-answers.js';
import { healthSchema } from './rest-schemas.js';
import { untraced } from '../observability/tracing.js';
import { sendProblem, type RestRoute } from './rest.js';
import type { OperationDocument, RunOperation } from './run-operation.js';

interface HealthAnswer {
  ok: boolean;
  checks: { name: string; ok: boolean; detail?: string | null }[];
}

/** Which health query of its subgraph a REST service asks (`operations/health.graphql`). */
export interface HealthQuery {
  /** The service's name in the answers (`contact-management`). */
  service: string;
  /** The subgraph's root field (`contactsHealth`), asked by the operations `<Name>Health` and `<Name>Readiness`. */
  field: string;
  /** The operation behind `/health` (every check with its detail), typed by the adapter's generated operations. */
  healthOperation: OperationDocument<unknown, Record<string, never>>;
  /** The operation behind `/readyz` (the database check). */
  readinessOperation: OperationDocument<unknown, Record<string, never>>;
}

/**
 * `GET /health` of a REST service: its subgraph checks its parts (database first, storage, job
 * queue...) and the adapter reports them, 503 when one fails; when the subgraph itself cannot be
 * reached, that is the failing part.
 */
export function healthRoutes(
  run: RunOperation,
  query: HealthQuery,
  summary = 'API health status and timestamp (checks the database)',
): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/health',
      summary,
      cacheControl: CACHE_CONTROL.live,
      doc: {
        operationId: 'getHealth',
        tag: 'service',
        answer: { status: 200, description: 'Every part is healthy', json: healthSchema },
        problems: [503],
        open: true,
      },
      handler: async (req, res) => {
        const timestamp = new Date().toISOString();
        let health: HealthAnswer;
        try {
          health = ((await run(query.healthOperation, {}, req)) as Record<string, HealthAnswer>)[query.field];
        } catch {
          health = {
            ok: false,
            checks: [{ name: `${query.field.replace(/Health$/, '')}-subgraph`, ok: false, detail: 'not answering' }],
          };
        }
        const checks = Object.fromEntries(
          health.checks.map((check) => [check.name, check.ok ? 'ok' : (check.detail ?? 'failing')]),
        );
        if (health.ok) {
          res.json({ status: 'ok', service: query.service, timestamp, checks });
          return;
        }
        const failing = health.checks.filter((check) => !check.ok).map((check) => check.name);
        sendProblem(
          res,
          problemFor(ErrorCode.SERVICE_UNAVAILABLE, `Not healthy: ${failing.join(', ')} failing`, {
            status: 503,
            service: query.service,
            timestamp,
            failing,
            checks,
          }),
          { 'retry-after': '5' },
        );
      },
    },
  ];
}

/**
 * `/readyz` of a REST service: ready once its subgraph answers with its database up (so migrations
 * ran), and not ready any more from the moment shutdown begins.
 */
export function readiness(
  client: Pick<GraphQLClient, 'execute'>,
  operation: string,
  field: string,
): { check(): Promise<boolean>; shutDown(): void } {
  let shuttingDown = false;
  return {
    async check() {
      if (shuttingDown) return false;
      try {
        const result = await untraced(() =>
          client.execute<Record<string, HealthAnswer>>(operation, {}, { forwardHeaders: {}, requestId: randomUUID() }),
        );
        return Boolean(result.data?.[field]?.checks.find((check) => check.name === 'database')?.ok);
      } catch {
        return false;
      }
    },
    shutDown() {
      shuttingDown = true;
    },
  };
}
