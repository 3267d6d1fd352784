import type { EntityManager } from '#lib/data/database.js';
import type { KeysetArgs } from '#lib/data/keyset.js';
import { EVENT_RETENTION_MS, type EventConnection, type EventFeed, type Positioned } from '#lib/data/event-feed.js';
import { ContactEvent, type ContactEventType } from './contact-event.entity.js';
import type { Contact } from './contact.entity.js';

/**
 * Adds a contact's event to `tx`, the transaction of the change, so that it commits or rolls back
 * with it. (A create and the fast update write theirs in their own statement: contact.queries.ts.)
 */
export function recordContactEvent(
  tx: EntityManager,
  contactId: string,
  type: ContactEventType,
  stages: { fromStageId?: string | null; toStageId?: string | null } = {},
): void {
  tx.persist(
    Object.assign(new ContactEvent(), {
      contactId,
      type,
      fromStageId: stages.fromStageId ?? null,
      toStageId: stages.toStageId ?? null,
    }),
  );
}

/**
 * Contact events, read as history or followed as they commit. Who may read them is the shield's
 * (contacts.read where contacts need a token): whoever reads one contact event may read them all.
 */
export class ContactEventService {
  constructor(private readonly feed: EventFeed<ContactEvent, Contact>) {}

  /** A page of the log, oldest first, its cursors the stream's: read the history, then `follow` after the last. */
  history(args: KeysetArgs): Promise<EventConnection<ContactEvent>> {
    return this.feed.page(args);
  }

  /** The contact the feed read along with `event` (`null`: none then), or `undefined` when it did not read the event. */
  contactReadWith(event: ContactEvent): Contact | null | undefined {
    return this.feed.subjectOf(event);
  }

  /** After `after` when given (BAD_USER_INPUT naming `after` when it names no event kept), else from now on. */
  async follow(after?: string | null): Promise<AsyncIterableIterator<Positioned<ContactEvent>>> {
    return this.feed.follow(after ? await this.feed.positionAfter(after) : await this.feed.present());
  }
}

/**
 * Drops the contact events past the feed's retention (the log is a feed, not the audit record a
 * contact keeps: that is its row and its stage moves). Answers how many went.
 */
export async function sweepContactEvents(em: EntityManager, now: Date): Promise<number> {
  return em.nativeDelete(ContactEvent, { occurredAt: { $lt: new Date(now.getTime() - EVENT_RETENTION_MS) } });
}
