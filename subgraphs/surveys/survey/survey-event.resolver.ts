import { Arg, Args, Ctx, FieldResolver, Query, Resolver, Root, Subscription } from 'type-graphql';
import { cursorOfRow } from '#lib/data/event-cursor.js';
import type { EventConnection, Positioned } from '#lib/data/event-feed.js';
import { ConnectionArgs } from '#lib/data/pagination.js';
import type { SurveysContext } from '../surveys.context.js';
import { SurveyEvent } from './survey-event.entity.js';
import { SurveyEventConnection } from './survey-event.types.js';
import { Survey } from './survey.entity.js';

/** The survey audit trail, read as history or followed as it grows, with the same cursors. */
@Resolver(() => SurveyEvent)
export class SurveyEventResolver {
  @Query(() => SurveyEventConnection, {
    nullable: true,
    description:
      'The events the `surveyEvents` subscription delivers (your surveys; every survey for an admin), oldest first; ' +
      "an edge's cursor is the event's, so the subscription resumes after the last one read",
  })
  surveyEvents(
    @Args(() => ConnectionArgs) args: ConnectionArgs,
    @Ctx() ctx: SurveysContext,
  ): Promise<EventConnection<SurveyEvent>> {
    return ctx.surveyEvents.history(args);
  }

  @Subscription(() => SurveyEvent, {
    name: 'surveyEvents',
    description:
      'Events of your surveys (every survey for an admin) as they happen; with `after`, those after that cursor first, oldest first',
    subscribe: ({ args, context }) =>
      (context as SurveysContext).surveyEvents.follow((args as { after?: string | null }).after),
  })
  followSurveyEvents(
    @Root() positioned: Positioned<SurveyEvent>,
    @Arg('after', () => String, {
      nullable: true,
      description: "Resume after this event's cursor (oldest first), then follow; none: from now on",
    })
    _after?: string,
  ): SurveyEvent {
    return positioned.event;
  }

  @FieldResolver(() => String, {
    description: 'Where the event stands in the trail: `after` of `surveyEvents` resumes from it (opaque)',
  })
  cursor(@Root() event: SurveyEvent): string {
    return cursorOfRow(event);
  }

  @FieldResolver(() => Survey, {
    nullable: true,
    description: 'The survey, as it is now (in a subscription: as the event was read); null once deleted',
  })
  async survey(@Root() event: SurveyEvent, @Ctx() ctx: SurveysContext): Promise<Survey | null> {
    // A delivered event comes with its survey, read once for every subscriber, each of whom must see it.
    const readWith = ctx.surveyEvents.surveyReadWith(event);
    if (readWith === undefined) return ctx.surveyById.load(event.surveyId);
    return readWith && ctx.surveys.sees(readWith) ? readWith : null;
  }
}
