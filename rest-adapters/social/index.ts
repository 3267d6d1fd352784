import type { GraphQLClient } from '../../lib/graphql-client.js';
import { listen } from '../../lib/http.js';
import { createRestApp, type RestRoute } from '../../lib/rest.js';
import type { Deps, RunningPart } from '../../lib/service.js';

/** Every route of the social publishing REST contract, in matching order. */
export function socialRestRoutes(_client: GraphQLClient): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/health',
      summary: 'Comprehensive health check',
      handler: (_req, res) => {
        res.json({ status: 'ok', service: 'social-publishing', timestamp: new Date().toISOString() });
      },
    },
  ];
}

export async function startSocialRest(deps: Pick<Deps, 'config' | 'logger'>, options: { port: number; client: GraphQLClient }): Promise<RunningPart> {
  const app = createRestApp({ name: 'social', config: deps.config, logger: deps.logger, routes: socialRestRoutes(options.client) });
  const server = await listen(app, options.port, deps.config.env.HOST);
  return { name: 'social-rest', url: server.url, close: () => server.close() };
}
