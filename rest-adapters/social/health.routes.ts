import { randomUUID } from 'node:crypto';
import { ErrorCode, problemFor } from '../../lib/errors.js';
import type { GraphQLClient } from '../../lib/graphql-client.js';
import { CACHE_CONTROL } from '../../lib/http-answers.js';
import { sendProblem, type RestRoute, type RunOperation } from '../../lib/rest.js';
import { socialHealthSchema } from './social.bodies.js';
import { SocialHealthDocument, type SocialHealthQuery, type SocialReadinessQuery } from './operations.generated.js';

/**
 * `GET /health`: the subgraph checks its parts (database, storage, job queue...) and the adapter
 * reports them; when the subgraph itself cannot be reached, that is the failing part.
 */
export function healthRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/health',
      summary: 'Comprehensive health check (database, job queue, storage)',
      cacheControl: CACHE_CONTROL.live,
      doc: { answer: { status: 200, description: 'Every part is healthy', json: socialHealthSchema }, problems: [503], open: true },
      handler: async (req, res) => {
        const timestamp = new Date().toISOString();
        let health: SocialHealthQuery['socialHealth'];
        try {
          health = (await run(SocialHealthDocument, {}, req)).socialHealth;
        } catch {
          health = { ok: false, checks: [{ name: 'social-subgraph', ok: false, detail: 'not answering' }] };
        }
        const checks = Object.fromEntries(health.checks.map((check) => [check.name, check.ok ? 'ok' : (check.detail ?? 'failing')]));
        if (health.ok) {
          res.json({ status: 'ok', service: 'social-publishing', timestamp, checks });
          return;
        }
        const failing = health.checks.filter((check) => !check.ok).map((check) => check.name);
        sendProblem(
          res,
          problemFor(ErrorCode.SERVICE_UNAVAILABLE, `Not healthy: ${failing.join(', ')} failing`, {
            status: 503,
            service: 'social-publishing',
            timestamp,
            failing,
            checks,
          }),
        );
      },
    },
  ];
}

/**
 * `/readyz` of the adapter: ready once the subgraph answers with its database up (so migrations
 * ran), and not ready any more from the moment shutdown begins.
 */
export function readiness(client: GraphQLClient, operations: Record<string, string>): { check(): Promise<boolean>; shutDown(): void } {
  let shuttingDown = false;
  return {
    async check() {
      if (shuttingDown) return false;
      try {
        const result = await client.execute<SocialReadinessQuery>(operations.SocialReadiness, {}, { forwardHeaders: {}, requestId: randomUUID() });
        return Boolean(result.data?.socialHealth.checks.find((check) => check.name === 'database')?.ok);
      } catch {
        return false;
      }
    },
    shutDown() {
      shuttingDown = true;
    },
  };
}
