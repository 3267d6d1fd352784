import type { EntityManager } from '#lib/data/database.js';
import type { Principal } from '#lib/identity.js';
import { isUuid } from '#lib/ids.js';
import { emptyConnection, keysetWindow, pageOfQuery, type Keyset, type KeysetArgs } from '#lib/data/keyset.js';
import type { Connection } from '#lib/data/pagination.js';
import type { EventCondition, EventConnection, EventFeed, EventVisibility, Positioned } from '#lib/data/event-feed.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import type { Reach } from '../access/reach.js';
import { ActorType, ContentEvent, type Actor, type ContentEventType } from './content-event.entity.js';
import { ContentEventOrder } from './content-event.input.js';
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
  /** Only these brands, each within the reach (FORBIDDEN otherwise). */
  brandIds?: readonly string[] | null;
}

/** A condition no event meets: a filter naming nothing that can exist still answers an empty page. */
const NOTHING: EventCondition = { sql: 'false', params: [] };

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
    private readonly feed: EventFeed<ContentEvent, Post>,
  ) {}

  /** The post the feed read along with `event`, whoever's (`null`: none then), or `undefined` when it did not read the event. */
  postReadWith(event: ContentEvent): Post | null | undefined {
    return this.feed.subjectOf(event);
  }

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

  /**
   * Newest first (the REST list's order), as a keyset connection on the log's sequence; oldest first,
   * the stream's events and cursors (`history`).
   */
  async connection(
    filter: EventFilter,
    args: KeysetArgs,
    order?: ContentEventOrder | null,
  ): Promise<Connection<ContentEvent> | EventConnection<ContentEvent>> {
    if (order === ContentEventOrder.OLDEST_FIRST) return this.history(filter, args);
    const window = keysetWindow(NEWEST_FIRST, args);
    this.checkBrands(filter.brandIds);
    if (filter.contentId !== undefined && filter.contentId !== null && !isUuid(filter.contentId)) {
      return emptyConnection();
    }
    const where: Record<string, unknown> = { ...this.reach.filter() };
    // Every brand asked for is in the reach (checked), so they alone bound the brands.
    if (filter.brandIds?.length) where.brandId = { $in: [...filter.brandIds] };
    if (filter.contentId) where.contentId = filter.contentId;
    if (filter.type) where.type = filter.type;
    const query = this.em.createQueryBuilder(ContentEvent, 'e').where(where);
    return pageOfQuery(query, NEWEST_FIRST, window, () => this.em.count(ContentEvent, where));
  }

  /**
   * A page of the events the stream would deliver to this caller, oldest first, its cursors the
   * stream's: read the history, then `follow` after the last.
   */
  private history(filter: EventFilter, args: KeysetArgs): Promise<EventConnection<ContentEvent>> {
    const where = [...this.visible(filter.brandIds).where];
    if (filter.contentId !== undefined && filter.contentId !== null) {
      where.push(isUuid(filter.contentId) ? { sql: 'e.content_id = ?', params: [filter.contentId] } : NOTHING);
    }
    if (filter.type) where.push({ sql: 'e.type = ?', params: [filter.type] });
    return this.feed.page(args, where);
  }

  /**
   * The events of the caller's reach (narrowed to `brandIds`) as they commit, after `after` when
   * given, else from now on. A brand outside the reach is refused here, before anything is followed;
   * each event is then kept only when it stands in the reach (an event keeps the brand its post had then).
   */
  async follow(filter: EventFilter, after?: string | null): Promise<AsyncIterableIterator<Positioned<ContentEvent>>> {
    const visible = this.visible(filter.brandIds);
    const from = after ? await this.feed.positionAfter(after) : await this.feed.present();
    // The same narrowing as the list's (`history`), applied to each event as it comes.
    const { contentId, type } = filter;
    return this.feed.follow(
      from,
      (event) => visible.keep(event) && (!contentId || event.contentId === contentId) && (!type || event.type === type),
    );
  }

  /**
   * The events of the owner's posts in the reach, narrowed to `brandIds` (each checked first): an
   * event keeps the brand its post had then, so after a post moved brands its older events stay with
   * the old brand.
   */
  private visible(brandIds: readonly string[] | null | undefined): EventVisibility<ContentEvent> {
    this.checkBrands(brandIds);
    const ownerId = this.reach.ownerId;
    const only = brandIds?.length ? new Set(brandIds) : null;
    // The brands asked for are all in the reach, so they alone bound the brands; else the reach does.
    const brands = only ?? this.reach.brandIds;
    const where: EventCondition[] = [{ sql: 'e.owner_id = ?', params: [ownerId] }];
    if (brands) where.push(brands.size ? { sql: 'e.brand_id in (?)', params: [[...brands]] } : NOTHING);
    return {
      where,
      keep: (event) =>
        event.ownerId === ownerId && this.reach.covers(event.brandId) && (only === null || only.has(event.brandId)),
    };
  }

  /** FORBIDDEN, naming `brandIds`, for a brand outside the caller's reach: refused before anything is read. */
  private checkBrands(brandIds: readonly string[] | null | undefined): void {
    const outside = (brandIds ?? []).filter((brandId) => !isUuid(brandId) || !this.reach.covers(brandId));
    if (outside.length) {
      throw new AppError(ErrorCode.FORBIDDEN, `Brand ${outside[0]} is outside your reach`, {
        fields: [{ field: 'brandIds', message: 'names a brand outside your reach' }],
      });
    }
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
