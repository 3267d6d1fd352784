import { Directive, Field, ID, ObjectType } from 'type-graphql';

/**
 * The contacts service's Contact as this subgraph knows it: its key, and the contacts merged into
 * it. The gateway fetches everything else from the contacts subgraph; this subgraph adds `surveys` to it.
 */
// The contacts subgraph's description, word for word: composition keeps one, and two would differ.
@ObjectType('Contact', { description: 'A contact of the sales team' })
@Directive('@key(fields: "id")')
export class SurveyContact {
  @Field(() => ID, { description: 'Id of the contact' })
  id!: string;

  /** Fetched from the contacts subgraph for `surveys`: a merged contact's surveys are its survivor's. */
  @Field(() => [ID], {
    nullable: true,
    description:
      'Ids of the contacts merged into this one (through merges of merges; a merge undone takes its ids away); other services follow them',
  })
  @Directive('@external')
  mergedIds?: string[] | null;
}
