import { ArgsType, Field, ID } from 'type-graphql';
import { ConnectionArgs } from '#lib/data/pagination.js';
import { ContentEventType } from './content-event.entity.js';

@ArgsType()
export class EventArgs extends ConnectionArgs {
  @Field(() => ID, { nullable: true, description: 'Only events of this content item' }) contentId?: string;
  @Field(() => ContentEventType, { nullable: true, description: 'Only events of this kind' }) type?: ContentEventType;
}

@ArgsType()
export class ContentEventStreamArgs {
  @Field(() => [ID], { nullable: true, description: 'Only events of these brands (each within your reach)' })
  brandIds?: string[];
  @Field(() => String, {
    nullable: true,
    description: "Resume after this event's cursor (oldest first), then follow; none: from now on",
  })
  after?: string;
}
