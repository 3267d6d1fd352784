import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { AppError, ErrorCode } from '#lib/errors.js';
import { SESSION_COOKIE_EXTENSION, type SessionCookieChange } from '#lib/http/session-cookie.js';
import { MagicLinkRequested, SurveySession, SurveySignIn } from './auth.types.js';
import { MagicLinkRequestInput, MagicLinkVerifyInput } from './auth.input.js';
import type { SignInContext } from './sign-in.context.js';
import { answerHoldsSecret } from '#lib/subgraph/idempotent-operations.js';

@Resolver()
export class SurveyAuthResolver {
  @Mutation(() => MagicLinkRequested, {
    nullable: true,
    description: 'Mails a sign-in link when the address may sign in; the answer never tells',
  })
  requestMagicLink(
    @Arg('input', () => MagicLinkRequestInput, { description: 'The address to send the link to' })
    input: MagicLinkRequestInput,
    @Ctx() ctx: SignInContext,
  ): Promise<MagicLinkRequested> {
    return ctx.auth.requestLink(input.email);
  }

  @Mutation(() => SurveySignIn, {
    nullable: true,
    description: 'Spends a sign-in link token and opens a session; through the gateway it also sets the session cookie',
  })
  async verifyMagicLink(
    @Arg('input', () => MagicLinkVerifyInput, { description: 'The token of the link' }) input: MagicLinkVerifyInput,
    @Ctx() ctx: SignInContext,
  ): Promise<SurveySignIn> {
    // The session token (in the answer and its cookie) is shown this once: never kept for an
    // Idempotency-Key's replay, so a link signs in once whatever the key.
    answerHoldsSecret(ctx);
    const signIn = await ctx.auth.verifyLink(input.token);
    askForSessionCookie(ctx, { token: signIn.token, expiresAt: signIn.expiresAt.toISOString() });
    return signIn;
  }

  @Query(() => SurveySession, {
    nullable: true,
    description: 'Who is signed in and until when: the magic-link session, else the identity token naming the surveyor',
  })
  surveySession(@Ctx() ctx: SignInContext): SurveySession {
    if (!ctx.surveyor) throw new AppError(ErrorCode.UNAUTHENTICATED, 'Not signed in');
    return { user: ctx.surveyor.user, expiresAt: ctx.surveyor.expiresAt };
  }

  @Mutation(() => Boolean, {
    nullable: true,
    description: 'Ends the current magic-link session; through the gateway it also clears the session cookie',
  })
  async endSurveySession(@Ctx() ctx: SignInContext): Promise<boolean> {
    // Cleared whatever the outcome, as REST sign-out does: a stale cookie is of no use to the browser either.
    askForSessionCookie(ctx, { clear: true });
    // An identity token is not ended here but by its issuer (or its expiry).
    if (!ctx.session) throw new AppError(ErrorCode.UNAUTHENTICATED, 'Not signed in with a magic-link session');
    await ctx.auth.endSession(ctx.session.id);
    return true;
  }
}

/** States the session cookie this answer asks for; the gateway sets it on its HTTP answer (`SESSION_COOKIE_EXTENSION`). */
function askForSessionCookie(ctx: SignInContext, change: SessionCookieChange): void {
  ctx.answerExtensions[SESSION_COOKIE_EXTENSION] = change;
}
