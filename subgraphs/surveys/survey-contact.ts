import { Ctx, Directive, Field, FieldResolver, ID, ObjectType, Resolver, Root } from 'type-graphql';
import { Survey } from './survey.entity.js';
import type { SurveysContext } from './surveys.context.js';

/**
 * The contacts service's Contact as this subgraph knows it: only its key. The gateway fetches
 * everything else from the contacts subgraph; this subgraph adds `surveys` to it.
 */
@ObjectType('Contact')
@Directive('@key(fields: "id")')
export class SurveyContact {
  @Field(() => ID, { description: 'Id of the contact' })
  id!: string;
}

@Resolver(() => SurveyContact)
export class ContactSurveysResolver {
  @FieldResolver(() => [Survey], { description: 'Surveys about this contact that the signed-in surveyor may see (all, for admins)' })
  surveys(@Root() contact: SurveyContact, @Ctx() ctx: SurveysContext): Promise<Survey[]> {
    return ctx.surveysByContact.load(contact.id);
  }
}

/** The gateway asks for `Contact.surveys` with only the contact's id in hand. */
export function resolveContactReference(reference: { id: string }): SurveyContact {
  return { id: reference.id };
}

/** Another subgraph (or the gateway) pointing at a survey sees it only when the session may. */
export function resolveSurveyReference(reference: { id: string }, ctx: SurveysContext): Promise<Survey | null> | null {
  return ctx.session ? ctx.surveyById.load(reference.id) : null;
}
