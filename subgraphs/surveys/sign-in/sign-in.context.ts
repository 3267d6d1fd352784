import type { AnswerExtensionsContext } from '#lib/subgraph/local-subgraph.js';
import type { ActiveSession, AuthService } from './auth.service.js';
import type { SurveyUser } from './auth.types.js';

/** Who is signed in to surveys, by either credential, and until when. */
export interface Surveyor {
  user: SurveyUser;
  expiresAt: Date;
}

/** What the sign-in resolvers use of a request's context (surveys.context.ts makes it). */
export interface SignInContext extends AnswerExtensionsContext {
  /** The magic-link session the request carries, if any (what `endSurveySession` ends). */
  session: ActiveSession | null;
  /** The surveyor: the session's, else the one an identity token identifies by its `email` claim. */
  surveyor: Surveyor | null;
  auth: AuthService;
}
