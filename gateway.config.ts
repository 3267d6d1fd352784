import { defineConfig } from '@graphql-hive/gateway';

/**
 * Hive Gateway on the platform's supergraph, in place of the Node gateway (gateway/gateway.ts):
 *
 *   npx hive-gateway supergraph schema/supergraph.graphql     # from the project root, which holds this file
 *
 * or the official image with this file and the supergraph mounted (docker-compose.yml, profile `hive`;
 * deploy/kubernetes). Hive Gateway loads this file itself, in its own process and often in its own
 * image where the platform's code is absent, so it reads the few settings it shares with the Node
 * gateway from the environment here, under the same names and defaults as lib/config.ts.
 */
const env = process.env;
const production = env.NODE_ENV === 'production';
const subgraphToken = env.SUBGRAPH_TOKEN?.trim();

/**
 * The caller's credentials, passed to every subgraph untouched (lib/graphql-client.ts FORWARDED_HEADERS);
 * each subgraph reads the one it uses. Hive Gateway forwards no header unless told to.
 */
const FORWARDED_HEADERS = ['authorization', 'x-api-key', 'cookie'];

/** `<NAME>_SUBGRAPH_URL` overrides the URL written in the supergraph, as it does for the Node gateway. */
const SUBGRAPH_URL_SETTINGS = { social: 'SOCIAL_SUBGRAPH_URL', surveys: 'SURVEYS_SUBGRAPH_URL', contacts: 'CONTACTS_SUBGRAPH_URL' };

function subgraphLocations(): Record<string, { location: string }> {
  const entries = Object.entries(SUBGRAPH_URL_SETTINGS).flatMap(([subgraph, setting]) => {
    const url = env[setting]?.trim();
    return url ? [[subgraph, { location: url }] as const] : [];
  });
  return Object.fromEntries(entries);
}

export const gatewayConfig = defineConfig({
  port: Number(env.GATEWAY_PORT || 4000),
  graphqlEndpoint: '/graphql',
  // The probes every part of the platform answers, so the same Kubernetes probes fit either gateway.
  healthCheckEndpoint: '/healthz',
  readinessCheckEndpoint: '/readyz',
  transportEntries: subgraphLocations(),
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) => ({
      ...Object.fromEntries(FORWARDED_HEADERS.map((name) => [name, request.headers.get(name)])),
      // SUBGRAPH_TOKEN: subgraphs deployed apart answer only callers that send it (lib/subgraph-token.ts).
      ...(subgraphToken ? { 'x-subgraph-token': subgraphToken } : {}),
    }),
  },
  // X-Request-Id: the caller's, or one made here; sent to every subgraph call and back to the caller.
  requestId: { headerName: 'x-request-id' },
  // The Node gateway's limits (graphql-armor there too); Hive's cost model differs, so no cost limit here.
  maxDepth: Number(env.GRAPHQL_MAX_DEPTH || 12),
  maxTokens: 5000,
  blockFieldSuggestions: production,
  // The same preflight headers Apollo Server demands, so a browser client works unchanged with either gateway.
  csrfPrevention: { requestHeaders: ['x-apollo-operation-name', 'apollo-require-preflight'] },
  ...(production ? { disableIntrospection: { disableIf: () => true }, graphiql: false, landingPage: false } : {}),
});
