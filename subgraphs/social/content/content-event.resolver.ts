import { Args, Ctx, FieldResolver, Query, Resolver, Root } from 'type-graphql';
import { Actor, ContentEvent } from './content-event.entity.js';
import { cursorOfEvent } from './content-event.service.js';
import { ContentEventConnection } from './content-event.types.js';
import { EventArgs } from './content-event.input.js';
import type { ContentContext } from './content.context.js';

/** The audit log of content operations. */
@Resolver(() => ContentEvent)
export class ContentEventResolver {
  @Query(() => ContentEventConnection, { nullable: true, description: 'The audit log, newest first' })
  async contentEvents(@Args(() => EventArgs) args: EventArgs, @Ctx() ctx: ContentContext) {
    const slice = await ctx.events.list({ contentId: args.contentId, type: args.type }, args.first, args.after);
    const edges = slice.items.map((node) => ({ cursor: cursorOfEvent(node), node }));
    return {
      edges,
      nodes: slice.items,
      totalCount: slice.total,
      pageInfo: {
        hasNextPage: slice.nextCursor !== null,
        hasPreviousPage: Boolean(args.after),
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      },
    };
  }

  @FieldResolver(() => Actor, { description: 'Who made the change' })
  actor(@Root() event: ContentEvent): Actor {
    return { type: event.actorType, id: event.actorId };
  }
}
