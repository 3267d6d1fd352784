import { LockMode, QueryOrder } from '@mikro-orm/core';
import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import { isUuid } from '#lib/ids.js';
import {
  byCreation,
  emptyConnection,
  keysetWindow,
  pageOfQuery,
  type Keyset,
  type KeysetArgs,
} from '#lib/data/keyset.js';
import type { Connection, Slice, Window } from '#lib/data/pagination.js';
import { checkVersion } from '#lib/data/versions.js';
import type { BrandService } from '../access/brand.service.js';
import type { Reach } from '../access/reach.js';
import { Campaign } from './campaign.entity.js';
import { ContentEventType, type Actor } from './content-event.entity.js';
import { actorOf, ContentEventService } from './content-event.service.js';
import { Post, PostStatus, snapshotOf } from './post.entity.js';
import { postsById } from './posts-by-id.js';
import type { ContentEditInput, CreatePostInput, UpdatePostInput } from './post.input.js';
import { approvedStatus, assertCanApply, type PostAction } from './post.state.js';
import type { PublishSchedule } from './publish-schedule.js';
import type { Platform } from '../social.platforms.js';

const QUEUE_STATUSES = [PostStatus.QUEUED, PostStatus.PUBLISHING, PostStatus.FAILED];

const NEWEST_FIRST = byCreation<Post>('p', 'desc');

/** Due order: the scheduled time (unscheduled posts last), then creation. */
const DUE_FIRST: Keyset<Post> = {
  direction: 'asc',
  parts: [
    { column: 'p.scheduled_at', kind: 'timeOrNever', of: (post) => post.scheduledAt },
    { column: 'p.created_at', kind: 'time', of: (post) => post.createdAt },
    { column: 'p.id', kind: 'id', of: (post) => post.id },
  ],
};
const CREATE_STATUSES = [PostStatus.DRAFT, PostStatus.SUGGESTED, PostStatus.QUEUED];

/**
 * Which of `ids` are media files the caller reaches, asked in the transaction `tx`. Media are another
 * feature (media/), which content does not import: social.context.ts hands this in.
 */
export type MediaInReach = (tx: EntityManager, ids: readonly string[]) => Promise<ReadonlySet<string>>;

export interface PostFilter {
  brandId?: string | null;
  statuses?: readonly PostStatus[] | null;
}

/** Who decides on a suggestion when it is not the caller (a review link), and what they said. */
export interface Decision {
  actor?: Actor;
  comment?: string | null;
  /** Change only while the post is at this version (REST If-Match; lib/data/versions.ts). */
  ifVersion?: number | null;
}

/** The posts of `filter` inside the reach, as a query; null when the filter names a brand out of reach (nothing matches). */
export function postsWhere(reach: Reach, filter: PostFilter = {}): Record<string, unknown> | null {
  const where: Record<string, unknown> = { ...reach.filter() };
  if (filter.brandId !== undefined && filter.brandId !== null) {
    if (!isUuid(filter.brandId) || !reach.covers(filter.brandId)) return null;
    where.brandId = filter.brandId;
  }
  if (filter.statuses?.length) where.status = { $in: [...filter.statuses] };
  return where;
}

/**
 * The rules of posts and of the content operations done on them. Every change runs in one
 * transaction with its audit event (`ContentEventService.record`) and with the move of the
 * post's publish job (`PublishSchedule.follow`), and every query is limited to the caller's reach
 * (their own posts; an API key's brands).
 */
export class PostService {
  constructor(
    private readonly em: EntityManager,
    private readonly reach: Reach,
    private readonly brands: BrandService,
    private readonly schedule: PublishSchedule,
    private readonly mediaInReach: MediaInReach,
  ) {}

  /** A post may carry only media files its author reaches: an API key's brands' files, never another brand's. */
  private async checkMedia(tx: EntityManager, post: Post): Promise<void> {
    if (!post.mediaIds.length) return;
    const reachable = await this.mediaInReach(tx, post.mediaIds);
    if (post.mediaIds.some((id) => !reachable.has(id)))
      throw AppError.badInput('mediaIds', 'names a media file that is unknown or out of reach');
  }

  private where(filter: PostFilter = {}): Record<string, unknown> | null {
    return postsWhere(this.reach, filter);
  }

  /** Posts newest first, as a keyset connection. */
  async connection(args: KeysetArgs, filter: PostFilter = {}): Promise<Connection<Post>> {
    return this.page(NEWEST_FIRST, args, this.where(filter));
  }

  /** The content queue (see `queue`) as a keyset connection. */
  async queueConnection(args: KeysetArgs, filter: PostFilter = {}): Promise<Connection<Post>> {
    return this.page(DUE_FIRST, args, this.queueWhere(filter));
  }

  private async page(keyset: Keyset<Post>, args: KeysetArgs, where: Record<string, unknown> | null) {
    const window = keysetWindow(keyset, args);
    if (!where) return emptyConnection<Post>();
    const query = this.em.createQueryBuilder(Post, 'p').where(where);
    return pageOfQuery(query, keyset, window, () => this.em.count(Post, where));
  }

  private queueWhere(filter: PostFilter): Record<string, unknown> | null {
    return this.where({ ...filter, statuses: filter.statuses?.length ? filter.statuses : QUEUE_STATUSES });
  }

  /** Posts newest first, a numbered page (the REST list). */
  async list(window: Window, filter: PostFilter = {}): Promise<Slice<Post>> {
    const where = this.where(filter);
    if (!where) return { items: [], total: 0 };
    const [items, total] = await this.em.findAndCount(Post, where, {
      orderBy: { createdAt: QueryOrder.DESC, id: QueryOrder.DESC },
      limit: window.limit,
      offset: window.offset,
    });
    return { items, total };
  }

  /** The content queue: due order (scheduled time, unscheduled last), by default what is waiting to go out or failed. */
  async queue(window: Window, filter: PostFilter = {}): Promise<Slice<Post>> {
    const where = this.queueWhere(filter);
    if (!where) return { items: [], total: 0 };
    const [items, total] = await this.em.findAndCount(Post, where, {
      orderBy: { scheduledAt: QueryOrder.ASC_NULLS_LAST, createdAt: QueryOrder.ASC, id: QueryOrder.ASC },
      limit: window.limit,
      offset: window.offset,
    });
    return { items, total };
  }

  async find(id: string): Promise<Post | null> {
    if (!isUuid(id)) return null;
    return this.em.findOne(Post, { id, ...this.reach.filter() });
  }

  findMany(ids: readonly string[]): Promise<Map<string, Post>> {
    return postsById(this.em, ids, this.reach.filter());
  }

  /** Whether the caller may see a post read without its reach (an event feed's, read once for all). */
  sees(post: Post): boolean {
    return this.reach.allows(post);
  }

  async get(id: string): Promise<Post> {
    const post = await this.find(id);
    if (!post) throw AppError.notFound('Post');
    return post;
  }

  async create(input: CreatePostInput): Promise<Post> {
    const content = requireContent(input.content);
    const { scheduledAt } = input;
    const status = input.status ?? (scheduledAt ? PostStatus.QUEUED : PostStatus.DRAFT);
    if (!CREATE_STATUSES.includes(status))
      throw AppError.badInput('status', 'must be draft or suggested (or queued with scheduledAt)');
    if (status === PostStatus.QUEUED && !scheduledAt)
      throw AppError.badInput('scheduledAt', 'is required for a queued post');
    return this.em.transactional(async (tx) => {
      const brand = await this.brands.brandForNewPost(tx, input.brandId);
      const post = new Post();
      post.ownerId = this.reach.ownerId;
      post.brandId = brand.id;
      post.content = content;
      post.platforms = normalizePlatforms(input.platforms);
      post.mediaIds = normalizeMediaIds(input.mediaIds);
      await this.checkMedia(tx, post);
      post.scheduledAt = scheduledAt ?? null;
      post.status = status;
      if (input.campaignId !== undefined) post.campaignId = await this.campaignFor(tx, input.campaignId, post.brandId);
      tx.persist(post);
      ContentEventService.record(tx, {
        post,
        type: ContentEventType.CREATED,
        actor: actorOf(this.reach.caller),
        before: null,
      });
      await this.schedule.follow(tx, post);
      return post;
    });
  }

  /** PUT of a post: any field, in any state but publishing and published. */
  async update(id: string, input: UpdatePostInput, ifVersion?: number | null): Promise<Post> {
    return this.change(
      id,
      'update',
      ContentEventType.UPDATED,
      async (post, tx) => {
        if (input.brandId !== undefined && input.brandId !== post.brandId) {
          if (input.brandId === null) throw AppError.badInput('brandId', 'cannot be null');
          post.brandId = (await this.brands.brandForNewPost(tx, input.brandId)).id;
          if (input.campaignId === undefined) post.campaignId = null;
        }
        applyEdit(post, input);
        if (input.mediaIds !== undefined) await this.checkMedia(tx, post);
        if (input.campaignId !== undefined)
          post.campaignId = await this.campaignFor(tx, input.campaignId, post.brandId);
        if (input.status !== undefined && input.status !== null && input.status !== post.status) {
          if (!CREATE_STATUSES.includes(input.status))
            throw AppError.badInput('status', 'can be set to draft, suggested or queued');
          post.status = input.status;
        }
        if (post.status === PostStatus.QUEUED && !post.scheduledAt) {
          throw AppError.badInput(
            'scheduledAt',
            'is required for a queued post (set status to draft to unschedule it)',
          );
        }
      },
      { ifVersion },
    );
  }

  async delete(id: string, ifVersion?: number | null): Promise<Post> {
    return this.em.transactional(async (tx) => {
      const post = await this.lockedPost(tx, id, ifVersion);
      assertCanApply('delete', post);
      const before = snapshotOf(post);
      ContentEventService.record(tx, {
        post,
        type: ContentEventType.DELETED,
        actor: actorOf(this.reach.caller),
        before,
        after: null,
      });
      tx.remove(post);
      await this.schedule.follow(tx, post, { removed: true });
      return post;
    });
  }

  /** PATCH of a content item: edits a draft or a suggestion draft and keeps its state. */
  async edit(id: string, input: ContentEditInput, ifVersion?: number | null): Promise<Post> {
    return this.change(
      id,
      'edit',
      ContentEventType.EDITED,
      async (post, tx) => {
        applyEdit(post, input);
        if (input.mediaIds !== undefined) await this.checkMedia(tx, post);
      },
      { ifVersion },
    );
  }

  async approve(id: string, decision: Decision = {}): Promise<Post> {
    return this.change(
      id,
      'approve',
      ContentEventType.APPROVED,
      async (post) => {
        post.status = approvedStatus(post);
      },
      decision,
    );
  }

  async reject(id: string, decision: Decision = {}): Promise<Post> {
    return this.change(
      id,
      'reject',
      ContentEventType.REJECTED,
      async (post) => {
        post.status = PostStatus.REJECTED;
      },
      decision,
    );
  }

  async reschedule(id: string, scheduledAt: Date | null | undefined): Promise<Post> {
    if (!scheduledAt) throw AppError.badInput('scheduledAt', 'is required');
    if (scheduledAt.getTime() <= Date.now()) throw AppError.badInput('scheduledAt', 'must be in the future');
    return this.change(id, 'reschedule', ContentEventType.RESCHEDULED, async (post) => {
      post.scheduledAt = scheduledAt;
      post.status = PostStatus.QUEUED;
    });
  }

  /**
   * Queues a failed post again. When a platform's last attempt ended with its outcome unknown (it
   * may have gone out), only `force` queues it: the user accepts it may post twice.
   */
  async retry(id: string, force = false): Promise<Post> {
    return this.change(id, 'retry', ContentEventType.RETRIED, async (post, tx) => {
      const unknown = force ? [] : await this.schedule.unknownOutcomes(tx, post.id);
      if (unknown.length) {
        throw new AppError(
          ErrorCode.CONFLICT,
          `The last publish to ${unknown.join(' and ')} may have gone out (its outcome is unknown); retry with ` +
            `force: true to publish again, which may post twice`,
          {
            fields: [{ field: 'force', message: 'must be true to retry a publish whose outcome is unknown' }],
            details: { unknownOutcome: unknown },
          },
        );
      }
      post.scheduledAt = new Date();
      post.status = PostStatus.QUEUED;
    });
  }

  /** Loads the post in `tx`, applies one action to it and writes its event, all in one transaction. */
  private change(
    id: string,
    action: PostAction,
    type: ContentEventType,
    apply: (post: Post, tx: EntityManager) => Promise<void>,
    decision: Decision = {},
  ): Promise<Post> {
    return this.em.transactional(async (tx) => {
      const post = await this.lockedPost(tx, id, decision.ifVersion);
      assertCanApply(action, post);
      const before = snapshotOf(post);
      await apply(post, tx);
      // An edit that changes nothing is not a change: no event, and the post keeps its updatedAt.
      if (JSON.stringify(snapshotOf(post)) === JSON.stringify(before)) return post;
      post.updatedAt = new Date();
      const after = decision.comment ? { ...snapshotOf(post), reviewComment: decision.comment } : undefined;
      ContentEventService.record(tx, {
        post,
        type,
        actor: decision.actor ?? actorOf(this.reach.caller),
        before,
        after,
      });
      await this.schedule.follow(tx, post);
      return post;
    });
  }

  /**
   * The post, row-locked for the rest of the transaction so two actions cannot both pass the state
   * check, nor two writers holding the same version both pass `ifVersion`.
   */
  private async lockedPost(tx: EntityManager, id: string, ifVersion?: number | null): Promise<Post> {
    const post = isUuid(id)
      ? await tx.findOne(Post, { id, ...this.reach.filter() }, { lockMode: LockMode.PESSIMISTIC_WRITE })
      : null;
    if (!post) throw AppError.notFound('Content item');
    checkVersion(post.version, ifVersion);
    return post;
  }

  private async campaignFor(tx: EntityManager, campaignId: string | null, brandId: string): Promise<string | null> {
    if (campaignId === null) return null;
    const campaign = isUuid(campaignId)
      ? await tx.findOne(Campaign, { id: campaignId, ownerId: this.reach.ownerId })
      : null;
    if (!campaign) throw AppError.badInput('campaignId', 'is not one of your campaigns');
    if (campaign.brandId !== brandId) throw AppError.badInput('campaignId', 'belongs to another brand');
    return campaign.id;
  }
}

/** The fields an edit and an update share; omitted ones stay as they are. */
function applyEdit(post: Post, input: ContentEditInput): void {
  if (input.content !== undefined) post.content = requireContent(input.content);
  if (input.platforms !== undefined) post.platforms = normalizePlatforms(input.platforms);
  if (input.mediaIds !== undefined) post.mediaIds = normalizeMediaIds(input.mediaIds);
  if (input.scheduledAt !== undefined) post.scheduledAt = input.scheduledAt;
}

function requireContent(content: string | null | undefined): string {
  const text = content?.trim();
  if (!text) throw AppError.badInput('content', 'is required');
  return text;
}

/** A platform named twice is one target (the graph's enum already refused any name of no platform). */
function normalizePlatforms(platforms: Platform[] | null | undefined): Platform[] {
  return [...new Set(platforms ?? [])];
}

function normalizeMediaIds(mediaIds: string[] | null | undefined): string[] {
  const ids = [...new Set((mediaIds ?? []).map((id) => id.trim().toLowerCase()))];
  if (ids.some((id) => !isUuid(id))) throw AppError.badInput('mediaIds', 'must be media ids (UUIDs)');
  return ids;
}
