import { Ctx, Directive, FieldResolver, Resolver, Root } from 'type-graphql';
import { SurveyContact } from './contact.types.js';
import { Survey } from './survey.entity.js';
import type { SurveyContext } from './survey.context.js';

/** `Contact.surveys`: what this subgraph adds to the contacts service's Contact. */
@Resolver(() => SurveyContact)
export class ContactSurveysResolver {
  // Nullable: a caller without survey credentials still gets the contact, this field null with its error.
  @FieldResolver(() => [Survey], {
    nullable: true,
    description:
      'Surveys about this contact, and about the contacts merged into it, that the signed-in surveyor may see (all, for admins); ' +
      'null, with an error, for a caller who is no surveyor',
  })
  // The merged ids come from the contacts subgraph: merges (and their undo) are never written here.
  @Directive('@requires(fields: "mergedIds")')
  async surveys(@Root() contact: SurveyContact, @Ctx() ctx: SurveyContext): Promise<Survey[]> {
    const lists = await ctx.surveysByContact.loadMany([contact.id, ...(contact.mergedIds ?? [])]);
    return lists.flatMap((list) => {
      if (list instanceof Error) throw list;
      return list;
    });
  }
}
