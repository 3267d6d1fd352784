import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { defineConfig, type GatewayPlugin } from '@graphql-hive/gateway';

/**
 * Hive Gateway on the platform's supergraph, in place of the Node gateway (gateway/gateway.ts):
 *
 *   npx hive-gateway supergraph schema/supergraph.graphql     # from the project root, which holds this file
 *
 * or the official image with this file and the supergraph mounted (docker-compose.yml, profile `hive`;
 * deploy/kubernetes). Hive Gateway loads this file itself, in its own process and often in its own
 * image where the platform's code is absent, so it reads the few settings it shares with the Node
 * gateway from the environment here, under the same names and defaults as lib/config.ts
 * (test/gateway/hive-config.test.ts holds the two in step).
 */
const env = process.env;
const production = env.NODE_ENV === 'production';
// A comma list rotates the token (lib/config.ts): the first is the one sent.
const subgraphToken = env.SUBGRAPH_TOKEN?.split(',')[0]?.trim();

/**
 * The caller's credentials, passed to every subgraph untouched (lib/rest/graphql-client.ts FORWARDED_HEADERS);
 * each subgraph reads the one it uses. Hive Gateway forwards no header unless told to.
 */
const FORWARDED_HEADERS = ['authorization', 'x-api-key', 'cookie', 'idempotency-key'];

/** `<NAME>_SUBGRAPH_URL` overrides the URL written in the supergraph, as it does for the Node gateway. */
const SUBGRAPH_URL_SETTINGS = {
  social: 'SOCIAL_SUBGRAPH_URL',
  surveys: 'SURVEYS_SUBGRAPH_URL',
  contacts: 'CONTACTS_SUBGRAPH_URL',
};

function subgraphLocations(): Record<string, { location: string }> {
  const entries = Object.entries(SUBGRAPH_URL_SETTINGS).flatMap(([subgraph, setting]) => {
    const url = env[setting]?.trim();
    return url ? [[subgraph, { location: url }] as const] : [];
  });
  return Object.fromEntries(entries);
}

/** Express's names for address ranges (proxy-addr's), as TRUST_PROXY accepts them for the Node gateway. */
const RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/**
 * TRUST_PROXY read as Express reads it (lib/http/client-address.ts): a hop count, or addresses, CIDR ranges
 * and range names of the proxies whose `X-Forwarded-For` is believed. Unset: the socket is the client.
 */
function trustedProxy(setting = env.TRUST_PROXY?.trim()): (address: string, hop: number) => boolean {
  if (!setting) return () => false;
  if (/^\d+$/.test(setting)) return (_address, hop) => hop < Number(setting);
  const proxies = new BlockList();
  for (const entry of setting.split(',').flatMap((item) => RANGES[item.trim()] ?? [item.trim()])) {
    const [address, bits] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) proxies.addAddress(address, family);
    else proxies.addSubnet(address, Number(bits), family);
  }
  return (address) => {
    // An IPv4 client of a dual-stack socket shows as ::ffff:a.b.c.d.
    const plain = address.replace(/^::ffff:(?=\d+\.)/i, '');
    return isIP(plain) !== 0 && proxies.check(plain, isIP(plain) === 6 ? 'ipv6' : 'ipv4');
  };
}
const trusted = trustedProxy();

/**
 * The client of a request, as the Node gateway finds it (`req.ip`): from the socket back through
 * `X-Forwarded-For`, the first address that is not a trusted proxy.
 */
function clientAddressOf(req: IncomingMessage | undefined): string | undefined {
  const socket = req?.socket?.remoteAddress;
  if (!socket) return undefined;
  const forwarded = String(req.headers['x-forwarded-for'] ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .reverse();
  const chain = [socket, ...forwarded];
  let hop = 0;
  while (hop < chain.length - 1 && trusted(chain[hop], hop)) hop += 1;
  return chain[hop];
}

/**
 * Sends the caller's address to every subgraph in `X-Platform-Client`, as the Node gateway does, so that
 * limits counted per client (sign-in mail) count per client behind Hive Gateway too. A subgraph believes
 * it only from a gateway: a caller with SUBGRAPH_TOKEN, or over loopback when none is set.
 */
const forwardClientAddress: GatewayPlugin = {
  onFetch: (fetch) => {
    // Under Node, the server context Hive Gateway runs each request with holds the request itself.
    const address = clientAddressOf((fetch.context as { req?: IncomingMessage } | undefined)?.req);
    if (address)
      fetch.setOptions({ ...fetch.options, headers: { ...fetch.options.headers, 'x-platform-client': address } });
  },
};

/** `CORS_ORIGINS` as lib/config.ts reads it (a comma list of origins; unset: `WEB_URL`'s origin). */
const corsOrigins = new Set(
  (env.CORS_ORIGINS?.trim() || new URL(env.WEB_URL?.trim() || 'http://localhost:5173').origin)
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => URL.canParse(entry))
    .map((entry) => new URL(entry).origin),
);

/**
 * The Node gateway's protection against cross-site request forgery (lib/http/csrf.ts says why it suffices),
 * in place of Yoga's `csrfPrevention`, which refuses urql's default GET queries: a request the browser
 * marks `Sec-Fetch-Site: cross-site` runs only from an origin of `CORS_ORIGINS`.
 */
const refuseCrossSiteRequests: GatewayPlugin = {
  onRequest(payload) {
    const { request, fetchAPI } = payload;
    if (request.headers.get('sec-fetch-site') !== 'cross-site') return;
    const origin = request.headers.get('origin');
    if (origin !== null && corsOrigins.has(origin)) return;
    const message =
      'A cross-site request runs only from an allowed origin (CORS_ORIGINS); this one was refused and ran nothing';
    payload.endResponse(
      new fetchAPI.Response(JSON.stringify({ errors: [{ message, extensions: { code: 'FORBIDDEN' } }] }), {
        status: 403,
        headers: { 'content-type': 'application/json; charset=utf-8' },
      }),
    );
  },
};

/**
 * `TRUSTED_DOCUMENTS`, the Node gateway's safelist (lib/trusted-documents.ts), on Hive Gateway's built-in
 * persisted documents: the same manifest (GraphQL Code Generator's `persisted-documents.json`), a
 * document named by `documentId` (`sha256:<hex>` or the hex) or by an APQ `sha256Hash`, and any other
 * a 400 `PERSISTED_QUERY_NOT_FOUND`. Unlike the Node gateway it runs no text, trusted or not (Hive
 * decides on arbitrary documents before it reads the body), and it does not know the REST adapters'
 * operations: REST services in front of Hive Gateway with a safelist need theirs in the manifest.
 * A manifest that cannot be read or is not JSON stops Hive Gateway at start.
 */
function trustedDocuments(file = env.TRUSTED_DOCUMENTS?.trim()) {
  if (!file) return {};
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  const documents = new Map(Object.entries(manifest).map(([key, text]) => [key.replace(/^sha256:/, ''), text]));
  const refusal = {
    message: `This document is not among the documents this gateway runs (TRUSTED_DOCUMENTS): send one of its trusted documents by documentId`,
    extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: { status: 400 } },
  };
  return {
    persistedDocuments: {
      getPersistedOperation: (key: string) => documents.get(key.replace(/^sha256:/, '')) ?? null,
      extractPersistedOperationId: (params: {
        documentId?: unknown;
        extensions?: { persistedQuery?: { sha256Hash?: unknown } };
      }) => {
        if (typeof params.documentId === 'string') return params.documentId;
        const hash: unknown = params.extensions?.persistedQuery?.sha256Hash;
        return typeof hash === 'string' ? hash : null;
      },
      allowArbitraryDocuments: false,
      customErrors: { notFound: refusal, persistedQueryOnly: refusal, keyNotFound: refusal },
    },
  };
}

export const gatewayConfig = defineConfig({
  port: Number(env.GATEWAY_PORT || 4000),
  graphqlEndpoint: '/graphql',
  // The probes every part of the platform answers, so the same Kubernetes probes fit either gateway.
  healthCheckEndpoint: '/healthz',
  readinessCheckEndpoint: '/readyz',
  // Subscriptions need nothing more: Hive's HTTP transport subscribes to the subgraph that owns the field
  // at the same URL, as GraphQL over SSE (a GET asking for text/event-stream), which each subgraph serves
  // on its port with the same gates as its queries (lib/subgraph/subscription-sse.ts); the credentials
  // below go along, and the subgraph checks them at subscribe and at every event.
  transportEntries: subgraphLocations(),
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) => ({
      ...Object.fromEntries(FORWARDED_HEADERS.map((name) => [name, request.headers.get(name)])),
      // SUBGRAPH_TOKEN: subgraphs deployed apart answer only callers that send it (lib/http/subgraph-token.ts).
      ...(subgraphToken ? { 'x-subgraph-token': subgraphToken } : {}),
    }),
  },
  plugins: () => [refuseCrossSiteRequests, forwardClientAddress],
  // X-Request-Id: the caller's, or one made here; sent to every subgraph call and back to the caller.
  requestId: { headerName: 'x-request-id' },
  // The Node gateway's limits (graphql-armor there too); Hive's cost model differs, so no cost limit here.
  maxDepth: Number(env.GRAPHQL_MAX_DEPTH || 12),
  maxTokens: 5000,
  blockFieldSuggestions: production,
  ...trustedDocuments(),
  ...(production ? { disableIntrospection: { disableIf: () => true }, graphiql: false, landingPage: false } : {}),
});
