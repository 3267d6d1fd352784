import type DataLoader from 'dataloader';
import type { EntityManager } from '../../lib/database.js';
import { bearerToken } from '../../lib/identity.js';
import { batchLoader } from '../../lib/loaders.js';
import { sessionCookieOf } from '../../lib/session-cookie.js';
import type { AuthContext } from '../../lib/shield.js';
import type { AnswerExtensionsContext, SubgraphRequest } from '../../lib/local-subgraph.js';
import { AssetService } from './asset.service.js';
import { AuthService, type ActiveSession } from './auth.service.js';
import { ExportService } from './export.service.js';
import type { SurveyAsset } from './survey-asset.entity.js';
import type { Survey } from './survey.entity.js';
import { SurveyService } from './survey.service.js';
import type { SurveysRuntime } from './surveys.runtime.js';

/** Everything a surveys resolver may use during one request: one entity manager fork, one session. */
export interface SurveysContext extends AuthContext, AnswerExtensionsContext {
  em: EntityManager;
  session: ActiveSession | null;
  auth: AuthService;
  /** Present only with a session; the shield keeps every resolver that uses them behind one. */
  surveys: SurveyService;
  assets: AssetService;
  exports: ExportService;
  surveyById: DataLoader<string, Survey | null>;
  surveysByContact: DataLoader<string, Survey[]>;
  committedAssetsBySurvey: DataLoader<string, SurveyAsset[]>;
}

/**
 * The session token of a request: a bearer token that is not a JWT (JWTs belong to the other
 * services and pass through here untouched), else the session cookie.
 */
function sessionTokenOf(req: SubgraphRequest): string | undefined {
  const bearer = bearerToken(req.headers.authorization);
  if (bearer && bearer.split('.').length !== 3) return bearer;
  return sessionCookieOf(req.headers.cookie);
}

/** One request's context on `em`, the request's own fork: the caller (a session, if any), the services, the loaders. */
export async function createSurveysContext(
  runtime: SurveysRuntime,
  em: EntityManager,
  req: SubgraphRequest,
): Promise<SurveysContext> {
  const auth = new AuthService(em, runtime.signIn, req.client ?? 'unknown');
  const session = await auth.sessionOf(sessionTokenOf(req));
  // Without a session nobody is shown anything; the empty user never matches an owner.
  const surveys = new SurveyService(em, session?.user ?? { email: '', isAdmin: false });
  const assets = new AssetService(em, surveys, runtime.assets);
  return {
    principal: session ? { userId: session.user.email, email: session.user.email, scopes: null, via: 'session' } : null,
    answerExtensions: {},
    em,
    session,
    auth,
    surveys,
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
