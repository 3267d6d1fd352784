import type { EntityManager } from '#lib/data/database.js';
import type { Principal } from '#lib/identity.js';
import { isUuid } from '#lib/ids.js';
import { emptyConnection, keysetWindow, pageOfQuery, type Keyset, type KeysetArgs } from '#lib/data/keyset.js';
import type { Connection } from '#lib/data/pagination.js';
import type { EventFeed, Positioned } from '#lib/data/event-feed.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import type { Reach } from '../access/reach.js';
import { ActorType, ContentEvent, type Actor, type ContentEventType } from './content-event.entity.js';
import { snapshotOf, type Post } from './post.entity.js';

export interface ContentChange {
  post: Post;
  type: ContentEventType;
  actor: Actor;
  /** The post before the change (`snapshotOf`), null for a creation. */
  before: Record<string, unknown> | null;
  /** Null for a deletion; defaults to the post as it is now. */
  after?: Record<string, unknown> | null;
}

export interface EventFilter {
  contentId?: string | null;
  type?: ContentEventType | null;
}

/** Newest first: the log's sequence orders it alone, unique as an id. */
const NEWEST_FIRST: Keyset<ContentEvent> = {
  direction: 'desc',
  parts: [{ column: 'e.seq', kind: 'sequence', of: (event) => event.seq }],
};

/**
 * The append-only audit log of content operations. `record` only persists into the entity
 * manager it is given, which must be the transaction of the change, so the event commits or
 * rolls back with it: no change exists without its event.
 */
export class ContentEventService {
  constructor(
    private readonly em: EntityManager,
    private readonly reach: Reach,
    private readonly feed: EventFeed<ContentEvent>,
  ) {}

  static record(tx: EntityManager, change: ContentChange): ContentEvent {
    const event = new ContentEvent();
    event.ownerId = change.post.ownerId;
    event.brandId = change.post.brandId;
    event.contentId = change.post.id;
    event.type = change.type;
    event.actorType = change.actor.type;
    event.actorId = change.actor.id;
    event.before = change.before;
    event.after = change.after === undefined ? snapshotOf(change.post) : change.after;
    tx.persist(event);
    return event;
  }

  /** Newest first, as a keyset connection on the log's sequence. */
  async connection(filter: EventFilter, args: KeysetArgs): Promise<Connection<ContentEvent>> {
    const window = keysetWindow(NEWEST_FIRST, args);
    if (filter.contentId !== undefined && filter.contentId !== null && !isUuid(filter.contentId)) {
      return emptyConnection();
    }
    const where: Record<string, unknown> = { ...this.reach.filter() };
    if (filter.contentId) where.contentId = filter.contentId;
    if (filter.type) where.type = filter.type;
    const query = this.em.createQueryBuilder(ContentEvent, 'e').where(where);
    return pageOfQuery(query, NEWEST_FIRST, window, () => this.em.count(ContentEvent, where));
  }

  /**
   * The events of the caller's reach (narrowed to `brandIds`) as they commit, after `after` when
   * given, else from now on. A brand outside the reach is refused here, before anything is followed;
   * each event is then kept only when it stands in the reach (an event keeps the brand its post had then).
   */
  async follow(
    brandIds: readonly string[] | null | undefined,
    after?: string | null,
  ): Promise<AsyncIterableIterator<Positioned<ContentEvent>>> {
    const ownerId = this.reach.ownerId;
    const outside = (brandIds ?? []).filter((brandId) => !isUuid(brandId) || !this.reach.covers(brandId));
    if (outside.length) {
      throw new AppError(ErrorCode.FORBIDDEN, `Brand ${outside[0]} is outside your reach`, {
        fields: [{ field: 'brandIds', message: 'names a brand outside your reach' }],
      });
    }
    const only = brandIds?.length ? new Set(brandIds) : null;
    const from = after ? await this.feed.positionAfter(after) : await this.feed.present();
    return this.feed.follow(
      from,
      (event) =>
        event.ownerId === ownerId && this.reach.covers(event.brandId) && (only === null || only.has(event.brandId)),
    );
  }

  /** Every event of each item, newest first (one query for any number of items). */
  async forContents(contentIds: readonly string[]): Promise<Map<string, ContentEvent[]>> {
    const byContent = new Map<string, ContentEvent[]>(contentIds.map((id) => [id, []]));
    if (!contentIds.length) return byContent;
    // Each event keeps the brand the post had then: after a post moved brands, its older events stay
    // with the old brand, out of reach of an API key limited to the new one.
    const rows = await this.em.find(
      ContentEvent,
      { contentId: { $in: [...contentIds] }, ...this.reach.filter() },
      { orderBy: { seq: 'desc' } },
    );
    for (const row of rows) byContent.get(row.contentId)?.push(row);
    return byContent;
  }
}

/** Who an event names as having made a change: the API key when one was used, else the user. */
export function actorOf(principal: Principal): Actor {
  return principal.via === 'api-key' && principal.apiKeyId
    ? { type: ActorType.API_KEY, id: principal.apiKeyId }
    : { type: ActorType.USER, id: principal.userId };
}
