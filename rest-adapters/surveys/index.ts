import type { GraphQLClient } from '../../lib/graphql-client.js';
import { listen } from '../../lib/http.js';
import { createRestApp, type RestRoute } from '../../lib/rest.js';
import type { Deps, RunningPart } from '../../lib/service.js';

/** Every route of the venue survey REST contract, in matching order. */
export function surveysRestRoutes(_client: GraphQLClient): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/health',
      summary: 'API health status and timestamp',
      handler: (_req, res) => {
        res.json({ status: 'ok', service: 'venue-survey', timestamp: new Date().toISOString() });
      },
    },
  ];
}

export async function startSurveysRest(deps: Pick<Deps, 'config' | 'logger'>, options: { port: number; client: GraphQLClient }): Promise<RunningPart> {
  const app = createRestApp({ name: 'surveys', config: deps.config, logger: deps.logger, routes: surveysRestRoutes(options.client) });
  const server = await listen(app, options.port, deps.config.env.HOST);
  return { name: 'surveys-rest', url: server.url, close: () => server.close() };
}
