import express, { type Router } from 'express';
import { DEFAULT_REST_PORTS } from '#lib/config.js';
import { apiReferenceRoutes } from '#lib/rest/api-reference.js';
import type { GraphQLClient } from '#lib/rest/graphql-client.js';
import type { PartPort } from '#lib/http/http.js';
import { openApiDocument, type OpenApiDocument } from '#lib/rest/openapi.js';
import type { ApiDescription } from '#lib/rest/route-doc.js';
import { SocialHealthDocument, SocialReadinessDocument } from './operations.generated.js';
import { healthRoutes, type HealthQuery } from '#lib/rest/health-routes.js';
import { operationRunner, subscriptionRunner } from '#lib/rest/run-operation.js';
import { serviceInfoRoutes, type RestRoute } from '#lib/rest/rest.js';
import { startRestService } from '#lib/rest/rest-service.js';
import type { Deps, RunningPart } from '#lib/service.js';
import { brandRoutes } from './brands.routes.js';
import { contentOpsRoutes } from './content-ops.routes.js';
import { postRoutes } from './posts.routes.js';
import { aiRoutes } from './ai.routes.js';
import { integrationRoutes } from './integrations.routes.js';
import { mediaRoutes } from './media.routes.js';
import { createStorage } from '#lib/storage/create-storage.js';
import { storageRouter } from '#lib/storage/storage-router.js';
import { reviewRoutes } from './review.routes.js';

const HEALTH: HealthQuery = {
  service: 'social-publishing',
  field: 'socialHealth',
  healthOperation: SocialHealthDocument,
  readinessOperation: SocialReadinessDocument,
};
/** The routes that take an API key as well as a bearer token. */
const CONTENT_OPS = '/api/content-ops/';

/** Credential kinds of the contract: API keys only on /api/content-ops/*, so the key is not passed on anywhere else. */
function apiKeyOnlyOnContentOps(): Router {
  const router = express.Router();
  router.use((req, _res, next) => {
    if (!req.path.startsWith(CONTENT_OPS)) delete req.headers['x-api-key'];
    next();
  });
  return router;
}

/** The social publishing API as its OpenAPI document introduces it: bearer tokens, and API keys on the content operations. */
const SOCIAL_API: ApiDescription = {
  title: 'Social publishing',
  localPort: { port: DEFAULT_REST_PORTS.social, variable: 'SOCIAL_REST_PORT' },
  tags: {
    posts: 'Posts of your brands: draft, schedule, update, delete',
    'content-ops': 'Content operations: the publishing queue, daily rollups, audit events and actions on one item',
    brands: 'The brands a user publishes for',
    integrations: 'Social platform accounts connected over OAuth',
    media: 'Media files: upload URLs and the files that arrived',
    ai: 'Images generated from a prompt, stored as media',
    review: 'A review link: a client without an account reads, approves or rejects one post',
  },
  description:
    'Posts, content operations (queue, daily rollups, audit events, item actions), media, AI images, brands and platform integrations. ' +
    `Every /api route takes a bearer token of the identity service; ${CONTENT_OPS}* also take an API key (X-API-Key); ` +
    '/api/review/{token} (a review link for a client without an account) takes only its token. ' +
    'A token or key without the scope a route needs gets 403. Errors are RFC 9457 problem details.',
  securitySchemes: {
    BearerAuth: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'A token of the identity service (`npm run token` in development)',
    },
    ApiKeyAuth: {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description: 'An API key (createApiKey), with its scopes and brands',
    },
  },
  securityOf: (route): Record<string, string[]>[] => {
    if (route.path.startsWith(CONTENT_OPS)) return [{ BearerAuth: [] }, { ApiKeyAuth: [] }];
    return route.path.startsWith('/api/') ? [{ BearerAuth: [] }] : [];
  },
};

/** Every route of the social publishing REST contract, in matching order. */
function socialRestRoutes(client: GraphQLClient): RestRoute[] {
  const run = operationRunner(client);
  const routes: RestRoute[] = [
    // /health and /readyz of this service check its parts: see lib/rest/health-routes.ts.
    ...serviceInfoRoutes('social-publishing', () => routes),
    ...apiReferenceRoutes(SOCIAL_API, () => routes),
    ...healthRoutes(run, HEALTH, 'Comprehensive health check (database, job queue, storage)'),
    ...postRoutes(run),
    ...contentOpsRoutes(run, subscriptionRunner(client)),
    ...brandRoutes(run),
    ...integrationRoutes(run),
    ...mediaRoutes(run),
    ...aiRoutes(run),
    ...reviewRoutes(run),
  ];
  return routes;
}

/** The service's OpenAPI document without serving it (`npm run schema`): the routes are listed, not run. */
export function socialOpenApi(client: GraphQLClient): OpenApiDocument {
  return openApiDocument(SOCIAL_API, socialRestRoutes(client));
}

export async function startSocialRest(
  deps: Pick<Deps, 'config' | 'logger'>,
  options: { port: PartPort; client: GraphQLClient },
): Promise<RunningPart> {
  return startRestService(deps, options, {
    name: 'social',
    health: HEALTH,
    routes: socialRestRoutes(options.client),
    // Signed upload URLs of the file store land here, with raw bodies, before JSON parsing.
    routers: [apiKeyOnlyOnContentOps(), storageRouter(createStorage(deps.config), deps.config)],
  });
}
