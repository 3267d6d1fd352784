import { Arg, Args, Ctx, FieldResolver, Query, Resolver, Root, Subscription } from 'type-graphql';
import { cursorOfRow } from '#lib/data/event-cursor.js';
import type { EventConnection, Positioned } from '#lib/data/event-feed.js';
import { ConnectionArgs } from '#lib/data/pagination.js';
import type { ContactsContext } from '../contacts.context.js';
import { ContactEvent } from './contact-event.entity.js';
import { ContactEventConnection } from './contact-event.types.js';
import { Contact } from './contact.entity.js';

/** The contact event log, read as history or followed as it grows, with the same cursors. */
@Resolver(() => ContactEvent)
export class ContactEventResolver {
  @Query(() => ContactEventConnection, {
    nullable: true,
    description:
      'The events the `contactEvents` subscription delivers, oldest first (kept 7 days); ' +
      "an edge's cursor is the event's, so the subscription resumes after the last one read",
  })
  contactEvents(
    @Args(() => ConnectionArgs) args: ConnectionArgs,
    @Ctx() ctx: ContactsContext,
  ): Promise<EventConnection<ContactEvent>> {
    return ctx.contactEvents.history(args);
  }

  @Subscription(() => ContactEvent, {
    name: 'contactEvents',
    description:
      'Changes of contacts as they happen (not the rows of an import: follow `contactImport`); with `after`, those after that cursor first, oldest first',
    subscribe: ({ args, context }) =>
      (context as ContactsContext).contactEvents.follow((args as { after?: string | null }).after),
  })
  followContactEvents(
    @Root() positioned: Positioned<ContactEvent>,
    @Arg('after', () => String, {
      nullable: true,
      description: "Resume after this event's cursor (oldest first), then follow; none: from now on",
    })
    _after?: string,
  ): ContactEvent {
    return positioned.event;
  }

  @FieldResolver(() => String, {
    description: 'Where the event stands in the log: `after` of `contactEvents` resumes from it (opaque)',
  })
  cursor(@Root() event: ContactEvent): string {
    return cursorOfRow(event);
  }

  @FieldResolver(() => Contact, {
    nullable: true,
    description: 'The contact, as it is now (in a subscription: as the event was read); null once deleted',
  })
  async contact(@Root() event: ContactEvent, @Ctx() ctx: ContactsContext): Promise<Contact | null> {
    // A delivered event comes with its contact, read once for every subscriber; history reads it now.
    const readWith = ctx.contactEvents.contactReadWith(event);
    return readWith !== undefined ? readWith : ctx.contactById.load(event.contactId);
  }
}
