import { Ctx, Directive, FieldResolver, Resolver, Root } from 'type-graphql';
import { Contact } from '../contact/contact.entity.js';
import type { MergeContext } from './merge.context.js';
import { ContactOfSurvey } from './survey.types.js';

/**
 * `Survey.contact`, resolved here from the survey's `contactId` (which the gateway fetches from the
 * surveys subgraph): a contact merged into another answers the one it went into, through merges of
 * merges, and the surveys service never learns of merges, so an undo needs no write there.
 */
@Resolver(() => ContactOfSurvey)
export class SurveyContactResolver {
  @FieldResolver(() => Contact, {
    nullable: true,
    description: 'The contact (contacts service) the survey is about; after a merge, the contact it was merged into',
  })
  @Directive('@requires(fields: "contactId")')
  contact(@Root() survey: ContactOfSurvey, @Ctx() ctx: MergeContext): Promise<Contact | null> | null {
    return survey.contactId ? ctx.survivorOf.load(survey.contactId) : null;
  }
}
