import { Directive, Field, ID, ObjectType } from 'type-graphql';

/**
 * The surveys service's Survey as this subgraph knows it: its key and the contact it points at.
 * This subgraph resolves `Survey.contact`, because only it knows where a merged contact went.
 */
// The surveys subgraph's descriptions, word for word: composition keeps one, and two would differ.
@ObjectType('Survey', { description: 'A venue survey' })
@Directive('@key(fields: "id")')
export class ContactOfSurvey {
  @Field(() => ID, { description: 'Id of the survey' })
  id!: string;

  @Field(() => ID, { nullable: true, description: 'The contact (contacts service) this survey is about' })
  @Directive('@external')
  contactId!: string | null;
}
