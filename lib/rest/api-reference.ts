import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { CACHE_CONTROL } from '../http/http-answers.js';
import { openApiDocument, type OpenApiDocument } from './openapi.js';
import type { ApiDescription, DocumentedRoute, RouteDoc } from './route-doc.js';
import { packageAsset, packageAssetsRouter } from './package-assets.js';

/** Where the API reference page and its document live on every REST service. */
export const DOCS_PATH = '/docs';
export const OPENAPI_PATH = '/openapi.json';
const ASSETS_PATH = `${DOCS_PATH}/assets`;

/** Swagger UI from its npm package (swagger-ui-dist), served by the service itself: the page needs no internet. */
const SWAGGER_UI = {
  script: packageAsset('swagger-ui-dist', 'swagger-ui-bundle.js', '.js'),
  css: packageAsset('swagger-ui-dist', 'swagger-ui.css', '.css'),
};

/**
 * Starts Swagger UI on the page; a file of its own so that the page's CSP needs no inline script.
 * `validatorUrl: null`: Swagger UI would otherwise send the document to an online validator.
 */
const START_SCRIPT = `window.ui = SwaggerUIBundle({
  url: new URL('${OPENAPI_PATH}', window.location.origin).href,
  dom_id: '#reference',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

/** Scripts, styles and the document come from this service only; Swagger UI's components set inline styles, its icons are data: URLs. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

function page(title: string): string {
  const escaped = title.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escaped}: API reference</title>
  <link rel="stylesheet" href="${ASSETS_PATH}/${SWAGGER_UI.css.name}">
</head>
<body>
  <noscript>The reference needs JavaScript; the document itself is at <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a>.</noscript>
  <div id="reference"></div>
  <script src="${ASSETS_PATH}/${SWAGGER_UI.script.name}"></script>
  <script src="${ASSETS_PATH}/start.js"></script>
</body>
</html>
`;
}

interface ReferenceRoute extends DocumentedRoute {
  eventStream?: undefined;
  cacheControl: string;
  doc: RouteDoc;
  handler: (req: Request, res: Response) => void;
}

/**
 * `GET /openapi.json` (the service's OpenAPI 3.1 document, made from `routes()` when first asked)
 * and `GET /docs` (the API reference page rendered from it), as routes of the service's table.
 */
export function apiReferenceRoutes(api: ApiDescription, routes: () => readonly DocumentedRoute[]): ReferenceRoute[] {
  let document: OpenApiDocument | undefined;
  return [
    {
      method: 'get',
      path: OPENAPI_PATH,
      summary: 'The OpenAPI 3.1 document of this service',
      cacheControl: CACHE_CONTROL.public,
      doc: {
        operationId: 'getOpenApiDocument',
        tag: 'service',
        answer: { status: 200, description: 'The document', json: z.looseObject({ openapi: z.string() }) },
        open: true,
      },
      handler: (_req, res) => {
        document ??= openApiDocument(api, routes());
        res.json(document);
      },
    },
    {
      method: 'get',
      path: DOCS_PATH,
      summary: 'API reference page (Swagger UI, served by this service: no internet needed)',
      cacheControl: 'no-cache',
      doc: {
        operationId: 'getApiReference',
        tag: 'service',
        answer: { status: 200, description: 'An HTML page', content: { 'text/html': z.string() } },
        open: true,
      },
      handler: (_req, res) => {
        res.set('content-security-policy', CONTENT_SECURITY_POLICY).type('html').send(page(api.title));
      },
    },
  ];
}

/** The page's scripts and styles (`/docs/assets/...`): static files, not part of the API. */
export function apiReferenceAssets(): Router {
  const router = express.Router();
  router.get(`${ASSETS_PATH}/start.js`, (_req, res) => {
    res.set('cache-control', 'no-cache').type('text/javascript').send(START_SCRIPT);
  });
  router.use(packageAssetsRouter(ASSETS_PATH, Object.values(SWAGGER_UI)));
  return router;
}
