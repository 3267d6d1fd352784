import type { CookieOptions, Request } from 'express';
import { z } from 'zod';
import { AppError, ErrorCode } from '#lib/errors.js';
import { stringParam, type RestRoute } from '#lib/rest/rest.js';
import type { RunOperation } from '#lib/rest/run-operation.js';
import { graphqlEnumOfWord, restEnum } from '#lib/rest/rest-enums.js';
import { randomToken, sha256Hex } from '#lib/secrets.js';
import { cookieOf } from '#lib/http/session-cookie.js';
import { integrationsSchema, restOfPlatform } from './social.bodies.js';
import {
  CompleteIntegrationConnectDocument,
  IntegrationsDocument,
  Platform,
  StartIntegrationConnectDocument,
} from './operations.generated.js';

/**
 * The browser that starts a connect gets a nonce in this cookie, and the state is bound to its hash:
 * the callback completes only in that same browser. Without it, an attacker could start a connect and
 * send the platform's page to a victim, whose account would then be stored under the attacker's user.
 */
const CONNECT_COOKIE = 'oauth_connect';
const connectCookie = (req: Request): CookieOptions => ({
  httpOnly: true,
  sameSite: 'lax',
  secure: req.secure,
  path: '/api/integrations',
  maxAge: 10 * 60 * 1000,
});

const PLATFORM = { platform: 'A platform on offer (see available), e.g. mastodon' };

/**
 * The platform a path names, by its REST word (`mastodon`). A word of no platform names nothing here:
 * 404, as for a platform that is not on offer (the graph's enum could not even carry it).
 */
function platformOf(req: Request): Platform {
  const word = stringParam(req.params.platform) ?? '';
  const platform = graphqlEnumOfWord(Platform, word);
  if (!platform) throw new AppError(ErrorCode.NOT_FOUND, `Platform ${word.slice(0, 40)} is not available`);
  return platform;
}
const redirect = (description: string) => ({ status: 302, description, headers: z.object({ Location: z.string() }) });

/**
 * `/api/integrations`: connecting social platforms over OAuth and listing them. The connect call
 * carries the user's bearer token; the platform's redirect back to the callback does not, which is
 * why the subgraph binds the single-use state to the user when the connect starts.
 */
export function integrationRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/integrations',
      summary: 'List connected integrations (never their tokens) and the platforms on offer',
      doc: {
        operationId: 'listIntegrations',
        tag: 'integrations',
        answer: { status: 200, description: 'Connected accounts and the platforms on offer', json: integrationsSchema },
      },
      handler: async (req, res) => {
        const data = await run(IntegrationsDocument, {}, req);
        res.json({
          data: data.integrations.map(restOfPlatform),
          total: data.integrations.length,
          available: restEnum(data.integrationPlatforms),
        });
      },
    },
    {
      method: 'get',
      path: '/api/integrations/:platform/connect',
      summary: "Start the OAuth flow for a platform: 302 to the platform's authorization page",
      doc: {
        operationId: 'connectIntegration',
        tag: 'integrations',
        params: PLATFORM,
        answer: redirect("To the platform's authorization page"),
      },
      handler: async (req, res) => {
        const nonce = randomToken(32);
        const { startIntegrationConnect } = await run(
          StartIntegrationConnectDocument,
          { platform: platformOf(req), browserBinding: sha256Hex(nonce) },
          req,
        );
        res.cookie(CONNECT_COOKIE, nonce, connectCookie(req));
        res.set('cache-control', 'no-store').redirect(302, startIntegrationConnect.authorizeUrl);
      },
    },
    {
      method: 'get',
      path: '/api/integrations/:platform/callback',
      summary: "The platform's redirect back: completes the connect and sends the browser to the web app",
      doc: {
        operationId: 'completeIntegrationConnect',
        tag: 'integrations',
        params: PLATFORM,
        query: z.object({
          state: z.string().optional().meta({ description: 'The single-use state the connect started with' }),
          code: z.string().optional().meta({ description: 'The authorization code' }),
          error: z.string().optional().meta({ description: 'Why the platform refused' }),
        }),
        answer: redirect('To the web app (WEB_URL), saying whether the account is connected'),
        // The platform's redirect carries no credentials: the state binds it to the user who started.
        open: true,
      },
      handler: async (req, res) => {
        const { completeIntegrationConnect } = await run(
          CompleteIntegrationConnectDocument,
          {
            platform: platformOf(req),
            state: stringParam(req.query.state),
            code: stringParam(req.query.code),
            error: stringParam(req.query.error),
            browserNonce: cookieOf(req.headers.cookie, CONNECT_COOKIE) ?? null,
          },
          req,
        );
        res.clearCookie(CONNECT_COOKIE, { ...connectCookie(req), maxAge: undefined });
        res.set('cache-control', 'no-store').redirect(302, completeIntegrationConnect.redirectUrl);
      },
    },
  ];
}
