import { Directive, Field, ID, ObjectType } from 'type-graphql';

/**
 * The contacts service's Contact as this subgraph knows it: only its key. The gateway fetches
 * everything else from the contacts subgraph; this subgraph adds `surveys` to it.
 */
// The contacts subgraph's description, word for word: composition keeps one, and two would differ.
@ObjectType('Contact', { description: 'A contact of the sales team' })
@Directive('@key(fields: "id")')
export class SurveyContact {
  @Field(() => ID)
  id!: string;
}
