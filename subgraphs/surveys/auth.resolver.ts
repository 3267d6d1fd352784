import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { AppError, ErrorCode } from '../../lib/errors.js';
import {
  MagicLinkRequested,
  MagicLinkRequestInput,
  MagicLinkVerifyInput,
  SurveySession,
  SurveySignIn,
} from './auth.types.js';
import type { SurveysContext } from './surveys.context.js';

@Resolver()
export class SurveyAuthResolver {
  @Mutation(() => MagicLinkRequested, {
    nullable: true,
    description: 'Mails a sign-in link when the address may sign in; the answer never tells',
  })
  requestMagicLink(
    @Arg('input', () => MagicLinkRequestInput, { description: 'The address to send the link to' })
    input: MagicLinkRequestInput,
    @Ctx() ctx: SurveysContext,
  ): Promise<MagicLinkRequested> {
    return ctx.auth.requestLink(input.email);
  }

  @Mutation(() => SurveySignIn, { nullable: true, description: 'Spends a sign-in link token and opens a session' })
  verifyMagicLink(
    @Arg('input', () => MagicLinkVerifyInput, { description: 'The token of the link' }) input: MagicLinkVerifyInput,
    @Ctx() ctx: SurveysContext,
  ) {
    return ctx.auth.verifyLink(input.token);
  }

  @Query(() => SurveySession, { nullable: true, description: 'The current session' })
  surveySession(@Ctx() ctx: SurveysContext): SurveySession {
    if (!ctx.session) throw new AppError(ErrorCode.UNAUTHENTICATED, 'Not signed in');
    return { user: ctx.session.user, expiresAt: ctx.session.expiresAt };
  }

  @Mutation(() => Boolean, { nullable: true, description: 'Ends the current session' })
  async endSurveySession(@Ctx() ctx: SurveysContext): Promise<boolean> {
    if (!ctx.session) throw new AppError(ErrorCode.UNAUTHENTICATED, 'Not signed in');
    await ctx.auth.endSession(ctx.session.id);
    return true;
  }
}
