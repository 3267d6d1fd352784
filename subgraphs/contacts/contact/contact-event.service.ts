import type { EntityManager } from '#lib/data/database.js';
import { EVENT_RETENTION_MS, type EventFeed, type Positioned } from '#lib/data/event-feed.js';
import { ContactEvent, type ContactEventType } from './contact-event.entity.js';

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

/** Contact events as they commit. Who may follow them is the shield's (contacts.read where contacts need a token). */
export class ContactEventService {
  constructor(private readonly feed: EventFeed<ContactEvent>) {}

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
