import { Arg, Args, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { toPage, windowOfPage } from '#lib/data/pagination.js';
import { IF_VERSION_DESCRIPTION } from '#lib/data/versions.js';
import { SurveyAsset } from '../assets/survey-asset.entity.js';
import { Survey } from './survey.entity.js';
import { CreateSurveyInput, SurveyConnectionArgs, SurveyPageArgs, UpdateSurveyInput } from './survey.input.js';
import type { SurveyContext } from './survey.context.js';
import { SurveyConnection, SurveyPage } from './survey.types.js';

@Resolver(() => Survey)
export class SurveyResolver {
  @Query(() => Survey, {
    nullable: true,
    description: 'A survey the signed-in surveyor may see; null when unknown or not theirs',
  })
  survey(@Arg('id', () => ID, { description: 'The survey' }) id: string, @Ctx() ctx: SurveyContext) {
    return ctx.surveys.find(id);
  }

  @Query(() => SurveyConnection, {
    nullable: true,
    description: 'Surveys the signed-in surveyor may see (all, for admins), newest first',
  })
  surveys(@Args(() => SurveyConnectionArgs) args: SurveyConnectionArgs, @Ctx() ctx: SurveyContext) {
    return ctx.surveys.connection(args, args.status);
  }

  @Query(() => SurveyPage, {
    nullable: true,
    description: 'The same list as numbered pages, kept for the REST list (`page`/`limit`)',
  })
  async surveyPage(@Args(() => SurveyPageArgs) args: SurveyPageArgs, @Ctx() ctx: SurveyContext) {
    const window = windowOfPage(args);
    return toPage(await ctx.surveys.list(window, args.status), window);
  }

  @Mutation(() => Survey, {
    nullable: true,
    description: 'Starts a draft survey owned by the signed-in surveyor; venueName is required',
  })
  createSurvey(
    @Arg('input', () => CreateSurveyInput, { description: 'Fields of the new survey' }) input: CreateSurveyInput,
    @Ctx() ctx: SurveyContext,
  ) {
    return ctx.surveys.create(input);
  }

  @Mutation(() => Survey, { nullable: true, description: 'Changes a draft; a submitted survey is a CONFLICT' })
  updateSurvey(
    @Arg('id', () => ID, { description: 'The draft to change' }) id: string,
    @Arg('input', () => UpdateSurveyInput, { description: 'Fields to change; omitted ones stay, null clears one' })
    input: UpdateSurveyInput,
    @Arg('ifVersion', () => Int, { nullable: true, description: IF_VERSION_DESCRIPTION }) ifVersion: number | null,
    @Ctx() ctx: SurveyContext,
  ) {
    return ctx.surveys.update(id, input, ifVersion);
  }

  @Mutation(() => Survey, {
    nullable: true,
    description: 'Submits a draft once its required fields are filled; it cannot change afterwards',
  })
  submitSurvey(@Arg('id', () => ID, { description: 'The draft to submit' }) id: string, @Ctx() ctx: SurveyContext) {
    return ctx.surveys.submit(id);
  }

  @FieldResolver(() => [SurveyAsset], { description: 'Committed photos and documents, in the order they were added' })
  assets(@Root() survey: Survey, @Ctx() ctx: SurveyContext) {
    return ctx.committedAssetsBySurvey.load(survey.id);
  }
}
