import { ArgsType, Field, ID, Int } from 'type-graphql';
import { ContentEventType } from './content-event.entity.js';

@ArgsType()
export class EventArgs {
  @Field(() => Int, { nullable: true, description: 'Events to return, 1 to 100 (default 20)' }) first?: number;
  @Field(() => String, {
    nullable: true,
    description: 'Cursor of the event after which to continue (older ones follow)',
  })
  after?: string;
  @Field(() => ID, { nullable: true, description: 'Only events of this content item' }) contentId?: string;
  @Field(() => ContentEventType, { nullable: true, description: 'Only events of this kind' }) type?: ContentEventType;
}
