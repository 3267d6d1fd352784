import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import { bearerCallerOf, bearerToken, invalidTokenRefusal, type Principal } from '#lib/identity.js';
import { batchLoader } from '#lib/data/loaders.js';
import { sessionCookieOf } from '#lib/http/session-cookie.js';
import { reportInto } from '#lib/http/rate-limit.js';
import type { AuthContext } from '#lib/subgraph/shield.js';
import type { SubgraphRequest } from '#lib/subgraph/local-subgraph.js';
import { AssetService } from './assets/asset.service.js';
import { AuthService, type ActiveSession } from './sign-in/auth.service.js';
import type { Surveyor, SignInContext } from './sign-in/sign-in.context.js';
import type { SurveyContext } from './survey/survey.context.js';
import type { AssetsContext } from './assets/assets.context.js';
import type { ExportContext } from './export/export.context.js';
import type { HealthContext } from './health/health.context.js';
import { ExportService } from './export/export.service.js';
import { SurveyService } from './survey/survey.service.js';
import { SurveyEventService } from './survey/survey-event.service.js';
import type { SurveysRuntime } from './surveys.runtime.js';

/**
 * Everything a surveys resolver may use during one request: one entity manager fork, one surveyor,
 * services bound to both, and the request's DataLoaders. Each feature folder declares the subset it uses
 * (`<feature>.context.ts`); this interface combines them all.
 */
export interface SurveysContext
  extends AuthContext, HealthContext, SignInContext, SurveyContext, AssetsContext, ExportContext {
  em: EntityManager;
}

/**
 * The session token of a request: a bearer token that is not a JWT (a JWT is an identity token, read
 * by `callerOf`), else the session cookie.
 */
function sessionTokenOf(req: SubgraphRequest): string | undefined {
  const bearer = bearerToken(req.headers.authorization);
  if (bearer && bearer.split('.').length !== 3) return bearer;
  return sessionCookieOf(req.headers.cookie);
}

interface SurveysCaller {
  principal: Principal | null;
  session: ActiveSession | null;
  surveyor: Surveyor | null;
  refusal?: AppError;
}

const NOBODY: SurveysCaller = { principal: null, session: null, surveyor: null };

/**
 * Who calls, read here and nowhere else. A live magic-link session first: it is this service's own
 * sign-in, and the one `endSurveySession` ends. Else a bearer JWT of the identity service whose
 * `email` claim identifies the surveyor, under the same sign-in rules as a magic link for that address
 * (ALLOWED_EMAIL_DOMAINS, ADMIN_EMAILS), limited by its `scope` claim. A token without `email`, or
 * an invalid one, is no surveys credential (it may be another service's); nobody is signed in then.
 */
async function callerOf(runtime: SurveysRuntime, auth: AuthService, req: SubgraphRequest): Promise<SurveysCaller> {
  const session = await auth.sessionOf(sessionTokenOf(req));
  if (session) {
    const { email } = session.user;
    return {
      principal: { userId: email, email, scopes: null, via: 'session' },
      session,
      surveyor: { user: session.user, expiresAt: session.expiresAt },
    };
  }
  const bearer = bearerToken(req.headers.authorization);
  // A session token sent as the bearer that matches no live session is rejected, as a bad JWT is.
  if (bearer && bearer.split('.').length !== 3) return { ...NOBODY, refusal: invalidTokenRefusal() };
  const { principal: token, refusal } = await bearerCallerOf(runtime.identity, req.headers.authorization);
  if (refusal) return { ...NOBODY, refusal };
  if (!token?.email) return NOBODY;
  const user = auth.surveyorOf(token.email);
  if (!user) {
    return {
      ...NOBODY,
      refusal: new AppError(ErrorCode.FORBIDDEN, 'This e-mail address may not use venue surveys'),
    };
  }
  return {
    principal: { ...token, email: user.email },
    session: null,
    surveyor: { user, expiresAt: token.expiresAt! },
  };
}

/** One request's context on `em`, the request's own fork: the caller (a session, if any), the services, the loaders. */
export async function createSurveysContext(
  runtime: SurveysRuntime,
  em: EntityManager,
  req: SubgraphRequest,
): Promise<SurveysContext> {
  const answerExtensions: Record<string, unknown> = {};
  const auth = new AuthService(em, runtime.signIn, req.client ?? 'unknown', reportInto(answerExtensions));
  const caller = await callerOf(runtime, auth, req);
  // Without a surveyor nobody is shown anything; the empty user never matches an owner.
  const surveys = new SurveyService(em, caller.surveyor?.user ?? { email: '', isAdmin: false });
  const assets = new AssetService(em, surveys, runtime.assets);
  return {
    ...caller,
    answerExtensions,
    em,
    auth,
    surveys,
    surveyEvents: new SurveyEventService(runtime.surveyFeed, caller.surveyor?.user ?? { email: '', isAdmin: false }),
    assets,
    exports: new ExportService(surveys, assets),
    surveyById: batchLoader(
      (ids) => surveys.findMany(ids),
      () => null,
    ),
    surveysByContact: batchLoader(
      (contactIds) => surveys.byContacts(contactIds),
      () => [],
    ),
    committedAssetsBySurvey: batchLoader(
      (surveyIds) => assets.committedOf(surveyIds),
      () => [],
    ),
  };
}
