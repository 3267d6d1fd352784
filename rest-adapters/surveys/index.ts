import { apiReferenceRoutes } from '#lib/rest/api-reference.js';
import { DEFAULT_REST_PORTS, type Config } from '#lib/config.js';
import type { GraphQLClient } from '#lib/rest/graphql-client.js';
import type { PartPort } from '#lib/http/http.js';
import { openApiDocument, type OpenApiDocument } from '#lib/rest/openapi.js';
import type { ApiDescription } from '#lib/rest/route-doc.js';
import { SurveysHealthDocument, SurveysReadinessDocument } from './operations.generated.js';
import { healthRoutes, type HealthQuery } from '#lib/rest/health-routes.js';
import { operationRunner } from '#lib/rest/run-operation.js';
import { serviceInfoRoutes, type RestRoute } from '#lib/rest/rest.js';
import { startRestService } from '#lib/rest/rest-service.js';
import type { Deps, RunningPart } from '#lib/service.js';
import { SESSION_COOKIE } from '#lib/http/session-cookie.js';
import { createStorage } from '#lib/storage/create-storage.js';
import { storageRouter } from '#lib/storage/storage-router.js';
import { authRoutes } from './auth.routes.js';
import { surveyRoutes } from './surveys.routes.js';

const HEALTH: HealthQuery = {
  service: 'venue-survey',
  field: 'surveysHealth',
  healthOperation: SurveysHealthDocument,
  readinessOperation: SurveysReadinessDocument,
};

/** Routes that sign in (the magic link) take no session; every other /api route needs one. */
const SIGN_IN = '/api/auth/magic/';

/**
 * The venue survey API as its OpenAPI document introduces it: a magic-link session, as a bearer token
 * or the session cookie. The routes run the subgraph's operations, so they also take what the subgraph
 * takes: an identity-service token whose `email` claim names the surveyor. That is deliberate (one
 * sign-in for every service) and keeps the documented statuses: no surveyor is still a 401, a token
 * without `surveys.read`/`surveys.write` or whose address may not sign in a 403.
 */
const SURVEYS_API: ApiDescription = {
  title: 'Venue surveys',
  localPort: { port: DEFAULT_REST_PORTS.surveys, variable: 'SURVEYS_REST_PORT' },
  tags: {
    surveys: 'Venue surveys: drafts, updates, submission and export',
    assets: 'Files of a survey: upload (presign, PUT, commit) and download',
    auth: 'Magic-link sign-in and the session',
  },
  description:
    'Surveys with uploaded assets (presign, PUT, commit), submission, export (html, markdown, whatsapp), and magic-link sign-in. ' +
    `Sign in with POST ${SIGN_IN}request then verify; every other /api route needs the session, sent as the ${SESSION_COOKIE} cookie ` +
    'or as a bearer token, or a bearer token of the identity service whose email claim names the surveyor ' +
    '(with a scope claim it needs surveys.read, and surveys.write to change). ' +
    'Admins (ADMIN_EMAILS) see every survey, others their own. Errors are RFC 9457 problem details.',
  securitySchemes: {
    SessionCookie: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'Set by the magic-link verify' },
    SessionBearer: {
      type: 'http',
      scheme: 'bearer',
      description:
        'The session token the magic-link verify answers, or a JWT of the identity service with an email claim',
    },
  },
  securityOf: (route): Record<string, string[]>[] =>
    route.path.startsWith('/api/') && !route.path.startsWith(SIGN_IN)
      ? [{ SessionCookie: [] }, { SessionBearer: [] }]
      : [],
};

/** Every route of the venue survey REST contract, in matching order. */
function surveysRestRoutes(client: GraphQLClient, options: Parameters<typeof authRoutes>[1]): RestRoute[] {
  const run = operationRunner(client);
  const routes: RestRoute[] = [
    // /health and /readyz of this service check its database: see lib/rest/health-routes.ts.
    ...serviceInfoRoutes('venue-survey', () => routes),
    ...apiReferenceRoutes(SURVEYS_API, () => routes),
    ...healthRoutes(run, HEALTH),
    ...surveyRoutes(run),
    ...authRoutes(run, options),
  ];
  return routes;
}

/** The service's OpenAPI document without serving it (`npm run schema`): the routes are listed, not run. */
export function surveysOpenApi(config: Config, client: GraphQLClient): OpenApiDocument {
  return openApiDocument(SURVEYS_API, surveysRestRoutes(client, { config }));
}

export async function startSurveysRest(
  deps: Pick<Deps, 'config' | 'logger'>,
  options: { port: PartPort; client: GraphQLClient },
): Promise<RunningPart> {
  const { config } = deps;
  return startRestService(deps, options, {
    name: 'surveys',
    health: HEALTH,
    routes: surveysRestRoutes(options.client, { config }),
    // The local file store's signed upload and download URLs point here (SURVEYS_PUBLIC_URL).
    routers: [storageRouter(createStorage(config), config)],
  });
}
