import path from 'node:path';
import type { GraphQLClient } from '../../lib/graphql-client.js';
import { listen } from '../../lib/http.js';
import { PROJECT_ROOT } from '../../lib/paths.js';
import { healthRoutes, readiness, type HealthQuery } from '../../lib/health-routes.js';
import { createRestApp, loadOperations, operationRunner, serviceInfoRoutes, type RestRoute } from '../../lib/rest.js';
import type { Deps, RunningPart } from '../../lib/service.js';
import { createStorage, storageRouter } from '../../lib/storage.js';
import { authRoutes } from './auth.routes.js';
import { surveyRoutes } from './surveys.routes.js';

const OPERATIONS_DIR = path.join(PROJECT_ROOT, 'rest-adapters', 'surveys', 'operations');
const HEALTH: HealthQuery = { service: 'venue-survey', field: 'surveysHealth', healthOperation: 'SurveysHealth', readinessOperation: 'SurveysReadiness' };

/** Every route of the venue survey REST contract, in matching order. */
function surveysRestRoutes(client: GraphQLClient, operations: Record<string, string>, options: Parameters<typeof authRoutes>[1]): RestRoute[] {
  const run = operationRunner(client, OPERATIONS_DIR, operations);
  const routes: RestRoute[] = [
    // /health and /readyz of this service check its database: see lib/health-routes.ts.
    ...serviceInfoRoutes('venue-survey', () => routes, { health: false }),
    ...healthRoutes(run, HEALTH),
    ...surveyRoutes(run),
    ...authRoutes(run, options),
  ];
  return routes;
}

export async function startSurveysRest(deps: Pick<Deps, 'config' | 'logger'>, options: { port: number; client: GraphQLClient }): Promise<RunningPart> {
  const { config } = deps;
  const storage = createStorage(config);
  const operations = loadOperations(OPERATIONS_DIR);
  const ready = readiness(options.client, operations[HEALTH.readinessOperation], HEALTH.field);
  const app = createRestApp({
    name: 'surveys',
    config,
    logger: deps.logger,
    routes: surveysRestRoutes(options.client, operations, { config }),
    // The local file store's signed upload and download URLs point here (SURVEYS_PUBLIC_URL).
    routers: [storageRouter(storage, config)],
    isReady: () => ready.check(),
  });
  const server = await listen(app, options.port, config.env.HOST);
  return {
    name: 'surveys-rest',
    url: server.url,
    close: async () => {
      ready.shutDown();
      await server.close();
    },
  };
}
