import { z } from 'zod';
import type { Config } from '#lib/config.js';
import { jsonBody, type RestRoute } from '#lib/rest/rest.js';
import type { RunOperation } from '#lib/rest/run-operation.js';
import { applySessionCookie, SESSION_COOKIE } from '#lib/http/session-cookie.js';
import {
  magicRequestedSchema,
  magicRequestSchema,
  magicVerifySchema,
  sessionSchema,
  signInSchema,
} from './surveys.bodies.js';
import {
  EndSurveySessionDocument,
  RequestMagicLinkDocument,
  SurveySessionDocument,
  VerifyMagicLinkDocument,
} from './operations.generated.js';

/**
 * Magic-link sign-in. The limits (per client address, which goes along with the operation, and per
 * e-mail address) and every other rule live in the subgraph, so GraphQL callers meet them too.
 */
export function authRoutes(run: RunOperation, options: { config: Config }): RestRoute[] {
  const secure = options.config.surveysCookieSecure;

  return [
    {
      method: 'post',
      path: '/api/auth/magic/request',
      summary: 'Request a sign-in link by e-mail ({ email }); the answer is the same for every address',
      rateLimit: 'subgraph',
      // 429 over 5 requests per address or 30 per client address in 15 minutes.
      doc: {
        operationId: 'requestMagicLink',
        tag: 'auth',
        body: magicRequestSchema,
        answer: { status: 202, description: 'Accepted (whether or not a mail was sent)', json: magicRequestedSchema },
        problems: [429],
      },
      handler: async (req, res) => {
        const input = jsonBody(req);
        const { requestMagicLink } = await run(RequestMagicLinkDocument, { input }, req);
        res.status(202).json({ message: requestMagicLink.message });
      },
    },
    {
      method: 'post',
      path: '/api/auth/magic/verify',
      summary: 'Verify a sign-in link ({ token }); answers the session token and sets the session cookie',
      doc: {
        operationId: 'verifyMagicLink',
        tag: 'auth',
        body: magicVerifySchema,
        answer: {
          status: 200,
          description: 'Signed in',
          json: signInSchema,
          headers: z.object({
            'Set-Cookie': z
              .string()
              .meta({ description: `${SESSION_COOKIE}=<token>; HttpOnly; SameSite=Lax (Secure over HTTPS)` }),
          }),
        },
        problems: [401],
      },
      handler: async (req, res) => {
        const { verifyMagicLink: signIn } = await run(VerifyMagicLinkDocument, { input: jsonBody(req) }, req);
        applySessionCookie(res, { token: signIn.token, expiresAt: signIn.expiresAt }, secure);
        res.set('cache-control', 'no-store').json(signIn);
      },
    },
    {
      method: 'get',
      path: '/api/auth/session',
      summary: 'The current session: { user: { email, isAdmin }, expiresAt }',
      doc: {
        operationId: 'getSession',
        tag: 'auth',
        answer: { status: 200, description: 'The session', json: sessionSchema },
      },
      handler: async (req, res) => {
        const { surveySession } = await run(SurveySessionDocument, {}, req);
        res.set('cache-control', 'no-store').json(surveySession);
      },
    },
    {
      method: 'post',
      path: '/api/auth/logout',
      summary: 'End the current session and clear the session cookie',
      doc: { operationId: 'logout', tag: 'auth', answer: { status: 204, description: 'Signed out' } },
      handler: async (req, res) => {
        // Cleared whatever the outcome: a stale cookie is of no use to the browser either.
        applySessionCookie(res, { clear: true }, secure);
        await run(EndSurveySessionDocument, {}, req);
        res.status(204).end();
      },
    },
  ];
}
