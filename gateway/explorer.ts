import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import express, { type Router } from 'express';
import type { Logger } from '#lib/observability/logger.js';
import { packageAsset, packageAssetsRouter, type PackageAsset } from '#lib/rest/package-assets.js';

/** Where GraphiQL lives beside the GraphQL endpoint. */
export const GRAPHIQL_PATH = '/graphiql';

const OFFLINE_TEXT = 'it appears that you might be offline.</p>';
const GRAPHIQL_LINK = `<p>GraphiQL needs no internet: it is served by this gateway at <a href="${GRAPHIQL_PATH}">${GRAPHIQL_PATH}</a>.</p>`;

/**
 * Apollo Sandbox as the landing page of `GET /graphql` (development), whose own text links to
 * GraphiQL: Sandbox loads from Apollo's CDN, and without internet that text is all the page shows.
 */
export function sandboxLandingPage<Context extends BaseContext>(): ApolloServerPlugin<Context> {
  const sandbox = ApolloServerPluginLandingPageLocalDefault({ embed: true }) as ApolloServerPlugin<Context>;
  return {
    async serverWillStart(service) {
      const listener = await sandbox.serverWillStart?.(service);
      const render = listener?.renderLandingPage?.bind(listener);
      if (!render) throw new Error("Apollo's Sandbox plugin no longer renders a landing page");
      return {
        async renderLandingPage() {
          const page = await render();
          return { html: async () => withGraphiQLLink(typeof page.html === 'string' ? page.html : await page.html()) };
        },
      };
    },
  };
}

/** The link right after Sandbox's offline notice (or, should Apollo reword it, at the top of the page's body). */
export function withGraphiQLLink(html: string): string {
  if (html.includes(OFFLINE_TEXT)) return html.replace(OFFLINE_TEXT, `${OFFLINE_TEXT}\n  ${GRAPHIQL_LINK}`);
  return html.replace('<body>', `<body>\n${GRAPHIQL_LINK}`);
}

/** Starts GraphiQL on the page; a file of its own so that the page's CSP needs no inline script. */
const START_SCRIPT = `
const endpoint = new URL('/graphql', window.location.origin).href;
const defaultQuery = \`# Welcome to GraphiQL, served by this gateway (no internet needed).
# Put credentials in the Headers tab below, e.g. { "Authorization": "Bearer <npm run token -- --sub user-1>" }
# Ctrl-Enter runs the query; the Docs button on the left explains every type, field and argument.
{
  contacts(first: 5) {
    totalCount
    nodes { id firstName lastName email }
  }
}
\`;
ReactDOM.createRoot(document.getElementById('graphiql')).render(
  React.createElement(GraphiQL, { fetcher: GraphiQL.createFetcher({ url: endpoint }), defaultQuery, defaultEditorToolsVisibility: true }),
);
`;

/** Everything the page loads comes from this gateway: scripts and styles only from here, no CDN, no inline script. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  // GraphiQL's components set inline styles; its fonts and icons are data: URLs inside its CSS.
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * `GET /graphiql` (development only): GraphiQL from its npm package (its UMD build, with React's),
 * every script and style served by this gateway, so the explorer works with no internet at all.
 * GraphiQL is a development dependency: where it is not installed (an image pruned for production)
 * the route is left out with a warning.
 */
export function graphiqlRouter(log: Logger): Router | undefined {
  let assets: { react: PackageAsset; reactDom: PackageAsset; graphiql: PackageAsset; css: PackageAsset };
  try {
    assets = {
      react: packageAsset('react', 'umd/react.production.min.js', '.js'),
      reactDom: packageAsset('react-dom', 'umd/react-dom.production.min.js', '.js'),
      graphiql: packageAsset('graphiql', 'graphiql.min.js', '.js'),
      css: packageAsset('graphiql', 'graphiql.min.css', '.css'),
    };
  } catch (error) {
    log.warn({ err: error }, `GraphiQL is not installed (a development dependency): ${GRAPHIQL_PATH} is not served`);
    return undefined;
  }
  const asset = (item: PackageAsset) => `${GRAPHIQL_PATH}/assets/${item.name}`;
  const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>GraphiQL</title>
  <link rel="stylesheet" href="${asset(assets.css)}">
  <link rel="stylesheet" href="${GRAPHIQL_PATH}/assets/page.css">
</head>
<body>
  <div id="graphiql">Loading GraphiQL…</div>
  <script src="${asset(assets.react)}"></script>
  <script src="${asset(assets.reactDom)}"></script>
  <script src="${asset(assets.graphiql)}"></script>
  <script src="${GRAPHIQL_PATH}/assets/start.js"></script>
</body>
</html>
`;

  const router = express.Router();
  router.get(GRAPHIQL_PATH, (_req, res) => {
    res
      .set({ 'content-security-policy': CONTENT_SECURITY_POLICY, 'cache-control': 'no-cache' })
      .type('html')
      .send(page);
  });
  router.get(`${GRAPHIQL_PATH}/assets/start.js`, (_req, res) => {
    res.set('cache-control', 'no-cache').type('text/javascript').send(START_SCRIPT);
  });
  router.get(`${GRAPHIQL_PATH}/assets/page.css`, (_req, res) => {
    res.set('cache-control', 'no-cache').type('text/css').send('body { margin: 0; } #graphiql { height: 100vh; }\n');
  });
  router.use(packageAssetsRouter(`${GRAPHIQL_PATH}/assets`, Object.values(assets)));
  return router;
}
