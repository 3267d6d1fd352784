import path from 'node:path';
import type { GraphQLClient } from '../../lib/graphql-client.js';
import { listen } from '../../lib/http.js';
import { PROJECT_ROOT } from '../../lib/paths.js';
import { createRestApp, operationRunner, serviceInfoRoutes, type RestRoute } from '../../lib/rest.js';
import type { Deps, RunningPart } from '../../lib/service.js';
import { createStorage, storageRouter } from '../../lib/storage.js';
import { authRoutes } from './auth.routes.js';
import { surveyRoutes } from './surveys.routes.js';

const OPERATIONS_DIR = path.join(PROJECT_ROOT, 'rest-adapters', 'surveys', 'operations');

/** Every route of the venue survey REST contract, in matching order. */
function surveysRestRoutes(client: GraphQLClient, options: Parameters<typeof authRoutes>[1]): RestRoute[] {
  const run = operationRunner(client, OPERATIONS_DIR);
  const routes: RestRoute[] = [
    ...serviceInfoRoutes('venue-survey', () => routes),
    ...surveyRoutes(run),
    ...authRoutes(run, options),
  ];
  return routes;
}

export async function startSurveysRest(deps: Pick<Deps, 'config' | 'logger'>, options: { port: number; client: GraphQLClient }): Promise<RunningPart> {
  const { config } = deps;
  const storage = createStorage(config);
  const app = createRestApp({
    name: 'surveys',
    config,
    logger: deps.logger,
    routes: surveysRestRoutes(options.client, { config }),
    // The local file store's signed upload and download URLs point here (SURVEYS_PUBLIC_URL).
    routers: [storageRouter(storage, config)],
  });
  const server = await listen(app, options.port, config.env.HOST);
  return {
    name: 'surveys-rest',
    url: server.url,
    close: async () => {
      await server.close();
    },
  };
}
