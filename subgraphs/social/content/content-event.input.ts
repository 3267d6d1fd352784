import { ArgsType, Field, ID, registerEnumType } from 'type-graphql';
import { ConnectionArgs } from '#lib/data/pagination.js';
import { ContentEventType } from './content-event.entity.js';

/**
 * The two readings of the `contentEvents` query. The query existed before the subscription of the
 * same name, newest first with keyset cursors of its own, and the legacy REST list (and every client
 * since) pages it that way: its default stays. An argument, rather than a second query, keeps the
 * contract's "a query of the same name as the stream" while changing nothing for those clients.
 */
export enum ContentEventOrder {
  NEWEST_FIRST = 'newest_first',
  OLDEST_FIRST = 'oldest_first',
}

registerEnumType(ContentEventOrder, {
  name: 'ContentEventOrder',
  description: 'How the `contentEvents` query reads the audit log',
  valuesConfig: {
    NEWEST_FIRST: { description: 'Newest first, with cursors of this list only (the default, as the REST list reads)' },
    OLDEST_FIRST: {
      description:
        "Oldest first, each edge's cursor the event's own: pass the last one as `after` of the `contentEvents` " +
        'subscription to follow on, missing nothing and repeating nothing',
    },
  },
});

@ArgsType()
export class EventArgs extends ConnectionArgs {
  @Field(() => ID, { nullable: true, description: 'Only events of this content item' }) contentId?: string;
  @Field(() => ContentEventType, { nullable: true, description: 'Only events of this kind' }) type?: ContentEventType;
  @Field(() => [ID], {
    nullable: true,
    description: 'Only events of these brands (each within your reach), as the subscription narrows them',
  })
  brandIds?: string[];
  // Nullable: a client's optional `$order` variable left null reads as the default, as it did before the argument.
  @Field(() => ContentEventOrder, {
    nullable: true,
    defaultValue: ContentEventOrder.NEWEST_FIRST,
    description: 'NEWEST_FIRST (default) or OLDEST_FIRST, whose cursors the subscription resumes from',
  })
  order?: ContentEventOrder | null;
}

@ArgsType()
export class ContentEventStreamArgs {
  @Field(() => [ID], { nullable: true, description: 'Only events of these brands (each within your reach)' })
  brandIds?: string[];
  @Field(() => ID, { nullable: true, description: 'Only events of this content item' }) contentId?: string;
  @Field(() => ContentEventType, { nullable: true, description: 'Only events of this kind' }) type?: ContentEventType;
  @Field(() => String, {
    nullable: true,
    description: "Resume after this event's cursor (oldest first), then follow; none: from now on",
  })
  after?: string;
}
