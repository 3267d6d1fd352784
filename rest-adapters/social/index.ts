import path from 'node:path';
import express, { type Router } from 'express';
import type { GraphQLClient } from '../../lib/graphql-client.js';
import { listen } from '../../lib/http.js';
import { PROJECT_ROOT } from '../../lib/paths.js';
import { createRestApp, loadOperations, operationRunner, serviceInfoRoutes, type RestRoute } from '../../lib/rest.js';
import type { Deps, RunningPart } from '../../lib/service.js';
import { brandRoutes } from './brands.routes.js';
import { contentOpsRoutes } from './content-ops.routes.js';
import { healthRoutes, readiness } from './health.routes.js';
import { postRoutes } from './posts.routes.js';
import { aiRoutes } from './ai.routes.js';
import { integrationRoutes } from './integrations.routes.js';
import { mediaRoutes } from './media.routes.js';
import { createStorage, storageRouter } from '../../lib/storage.js';
import { RateLimits, type RateLimiter } from '../../lib/rate-limit.js';
import { REVIEW_PER_CLIENT, REVIEW_WINDOW_SECONDS, reviewRoutes } from './review.routes.js';

const OPERATIONS_DIR = path.join(PROJECT_ROOT, 'rest-adapters', 'social', 'operations');

/** Credential kinds of the contract: API keys only on /api/content-ops/*, so the key is not passed on anywhere else. */
function apiKeyOnlyOnContentOps(): Router {
  const router = express.Router();
  router.use((req, _res, next) => {
    if (!req.path.startsWith('/api/content-ops/')) delete req.headers['x-api-key'];
    next();
  });
  return router;
}

/** Every route of the social publishing REST contract, in matching order. */
function socialRestRoutes(client: GraphQLClient, operations: Record<string, string>, reviewPerClient: RateLimiter): RestRoute[] {
  const run = operationRunner(client, OPERATIONS_DIR, operations);
  const routes: RestRoute[] = [
    // /health, /healthz and /readyz of this service check its parts: see health.routes.ts.
    ...serviceInfoRoutes('social-publishing', () => routes, { health: false }),
    ...healthRoutes(run),
    ...postRoutes(run),
    ...contentOpsRoutes(run),
    ...brandRoutes(run),
    ...integrationRoutes(run),
    ...mediaRoutes(run),
    ...aiRoutes(run),
    ...reviewRoutes(run, reviewPerClient),
  ];
  return routes;
}

export async function startSocialRest(deps: Pick<Deps, 'config' | 'logger'>, options: { port: number; client: GraphQLClient }): Promise<RunningPart> {
  const operations = loadOperations(OPERATIONS_DIR);
  const ready = readiness(options.client, operations);
  const limits = new RateLimits(deps.config);
  const app = createRestApp({
    name: 'social',
    config: deps.config,
    logger: deps.logger,
    routes: socialRestRoutes(options.client, operations, limits.limiter('social-review-client', REVIEW_PER_CLIENT, REVIEW_WINDOW_SECONDS)),
    // Signed upload URLs of the file store land here, with raw bodies, before JSON parsing.
    routers: [apiKeyOnlyOnContentOps(), storageRouter(createStorage(deps.config), deps.config)],
    isReady: () => ready.check(),
  });
  const server = await listen(app, options.port, deps.config.env.HOST);
  return {
    name: 'social-rest',
    url: server.url,
    close: async () => {
      ready.shutDown();
      await server.close();
      await limits.close();
    },
  };
}
