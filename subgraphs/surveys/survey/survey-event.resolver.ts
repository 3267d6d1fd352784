import { Arg, Ctx, FieldResolver, Resolver, Root, Subscription } from 'type-graphql';
import { cursorOfRow } from '#lib/data/event-cursor.js';
import type { Positioned } from '#lib/data/event-feed.js';
import type { SurveysContext } from '../surveys.context.js';
import { SurveyEvent } from './survey-event.entity.js';
import { Survey } from './survey.entity.js';

/** The survey audit trail, followed as it grows. */
@Resolver(() => SurveyEvent)
export class SurveyEventResolver {
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

  @FieldResolver(() => Survey, { nullable: true, description: 'The survey, as it is now; null once deleted' })
  survey(@Root() event: SurveyEvent, @Ctx() ctx: SurveysContext): Promise<Survey | null> {
    return ctx.surveyById.load(event.surveyId);
  }
}
