import { Arg, Args, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { ConnectionArgs, PageArgs, toPage, windowOfPage } from '#lib/data/pagination.js';
import { ContactConnection } from '../contact/contact.types.js';
import type { PipelinesContext } from './pipelines.context.js';
import { Pipeline, Stage, StagePlacement } from './pipeline.entity.js';
import { MoveInput, PipelineInput, StageContactsArgs } from './pipeline.input.js';
import { PipelineConnection, PipelinePage, StageMoveConnection, StageMovePage } from './pipeline.types.js';

@Resolver(() => Pipeline)
export class PipelineResolver {
  @Query(() => PipelineConnection, { nullable: true, description: 'Sales pipelines, the default first' })
  pipelines(@Args(() => ConnectionArgs) args: ConnectionArgs, @Ctx() ctx: PipelinesContext) {
    return ctx.pipelines.connection(args);
  }

  @Query(() => PipelinePage, {
    nullable: true,
    description: 'The same list as numbered pages, kept for the REST list (`page`/`limit`)',
  })
  async pipelinePage(@Args(() => PageArgs) args: PageArgs, @Ctx() ctx: PipelinesContext) {
    const window = windowOfPage(args);
    return toPage(await ctx.pipelines.list(window), window);
  }

  @Query(() => Pipeline, { nullable: true, description: 'A pipeline with its stages; null when unknown' })
  pipeline(@Arg('id', () => ID, { description: 'The pipeline' }) id: string, @Ctx() ctx: PipelinesContext) {
    return ctx.pipelines.find(id);
  }

  @Mutation(() => Pipeline, { nullable: true, description: 'Creates a sales pipeline with its stages' })
  createPipeline(
    @Arg('input', () => PipelineInput, { description: 'Name and stage names of the pipeline' }) input: PipelineInput,
    @Ctx() ctx: PipelinesContext,
  ) {
    return ctx.pipelines.create(input);
  }

  @Mutation(() => StagePlacement, {
    nullable: true,
    description: 'Moves a contact to a stage and records the move in its history, in one transaction',
  })
  moveContact(
    @Arg('contactId', () => ID, { description: 'The live contact to move' }) contactId: string,
    @Arg('input', () => MoveInput, { description: 'The stage to move to (and its pipeline)' }) input: MoveInput,
    @Ctx() ctx: PipelinesContext,
  ) {
    return ctx.pipelines.move(contactId, input);
  }

  @Query(() => StageMoveConnection, { nullable: true, description: 'Stage moves of a live contact, oldest first' })
  stageMoves(
    @Arg('contactId', () => ID, { description: 'The contact whose history to list' }) contactId: string,
    @Args(() => ConnectionArgs) args: ConnectionArgs,
    @Ctx() ctx: PipelinesContext,
  ) {
    return ctx.pipelines.historyConnection(contactId, args);
  }

  @Query(() => StageMovePage, {
    nullable: true,
    description: 'The same history as numbered pages, kept for the REST list (`page`/`limit`)',
  })
  async stageMovePage(
    @Arg('contactId', () => ID, { description: 'The contact whose history to list' }) contactId: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: PipelinesContext,
  ) {
    const window = windowOfPage(args);
    return toPage(await ctx.pipelines.history(contactId, window), window);
  }

  @FieldResolver(() => [Stage], { description: 'Stages in order' })
  stages(@Root() pipeline: Pipeline, @Ctx() ctx: PipelinesContext) {
    return ctx.stagesOfPipeline.load(pipeline.id);
  }
}

@Resolver(() => Stage)
export class StageResolver {
  @FieldResolver(() => Int, { description: 'Live contacts in this stage' })
  contactCount(@Root() stage: Stage, @Ctx() ctx: PipelinesContext) {
    return ctx.stageContactCount.load(stage.id);
  }

  @FieldResolver(() => ContactConnection, {
    description: 'Live contacts in this stage, most recently moved first (the board)',
  })
  async contacts(
    @Root() stage: Stage,
    @Args(() => StageContactsArgs) args: StageContactsArgs,
    @Ctx() ctx: PipelinesContext,
  ) {
    const [page, total] = await Promise.all([
      ctx.stageContacts.load({ stageId: stage.id, args }),
      ctx.stageContactCount.load(stage.id),
    ]);
    return { ...page, totalCount: total, totalExact: true };
  }
}
