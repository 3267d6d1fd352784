import { Args, Ctx, FieldResolver, Query, Resolver, Root } from 'type-graphql';
import { Actor, ContentEvent } from './content-event.entity.js';
import { ContentEventConnection } from './content-event.types.js';
import { EventArgs } from './content-event.input.js';
import type { ContentContext } from './content.context.js';

/** The audit log of content operations. */
@Resolver(() => ContentEvent)
export class ContentEventResolver {
  @Query(() => ContentEventConnection, { nullable: true, description: 'The audit log, newest first' })
  contentEvents(@Args(() => EventArgs) args: EventArgs, @Ctx() ctx: ContentContext) {
    return ctx.events.connection({ contentId: args.contentId, type: args.type }, args);
  }

  @FieldResolver(() => Actor, { description: 'Who made the change' })
  actor(@Root() event: ContentEvent): Actor {
    return { type: event.actorType, id: event.actorId };
  }
}
