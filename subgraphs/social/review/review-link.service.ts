import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import type { RateLimiter, RateLimitReport } from '#lib/http/rate-limit.js';
import { isUuid } from '#lib/ids.js';
import { randomToken, sha256Hex } from '#lib/secrets.js';
import { Brand } from '../access/brand.entity.js';
import { Reach } from '../access/reach.js';
import { ActorType } from '../content/content-event.entity.js';
import { Post, PostStatus } from '../content/post.entity.js';
import type { PostService } from '../content/post.service.js';
import { MediaFile, MediaStatus } from '../media/media.entity.js';
import { MediaService, type MediaSettings } from '../media/media.service.js';
import { ReviewLink } from './review-link.entity.js';
import type { CreatedReviewLink, ReviewedPost } from './review-link.types.js';

const DEFAULT_HOURS = 72;
const MAX_HOURS = 720;

/** Uses of the public fields (show, approve, reject) per client address per minute, REST and GraphQL together. */
export const REVIEW_PER_CLIENT = 60;
export const REVIEW_WINDOW_SECONDS = 60;

/**
 * What review links need beyond the request: where the web app lives, the media store, posts bound
 * to a reach, and the limit per client (social.runtime.ts makes it once).
 */
export interface ReviewTools {
  webUrl: string;
  media: MediaSettings;
  /** The post rules as someone inside `reach` applies them (social.context.ts wires the service). */
  postsIn: (reach: Reach) => PostService;
  perClient: RateLimiter;
}

/**
 * Review links: made and revoked by the owner (inside their reach), used by anyone holding the
 * token. A decision through a link is the owner's approve or reject, run in the owner's name for
 * the link's brand only, with the link as the audit event's actor.
 */
export class ReviewLinkService {
  constructor(
    private readonly em: EntityManager,
    private readonly reach: Reach,
    private readonly tools: ReviewTools,
    /** The caller's address bucket (lib/http/client-address.ts: IPv6 per /64), for the limit per client. */
    private readonly client = 'unknown',
    /** Hears where the limit stands for this caller, for the answer to say. */
    private readonly reportRateLimit?: RateLimitReport,
  ) {}

  async create(postId: string, expiresInHours: number | null | undefined): Promise<CreatedReviewLink> {
    const hours = expiresInHours ?? DEFAULT_HOURS;
    if (!Number.isInteger(hours) || hours < 1 || hours > MAX_HOURS)
      throw AppError.badInput('expiresInHours', `must be a whole number of hours from 1 to ${MAX_HOURS}`);
    // Inside the caller's reach: a key limited to one brand finds no post of another.
    const post = await this.tools.postsIn(this.reach).get(postId);
    if (post.status !== PostStatus.SUGGESTED) {
      throw new AppError(ErrorCode.CONFLICT, `Only a suggestion draft can be reviewed; this one is ${post.status}`, {
        details: { currentState: post.status },
      });
    }
    const token = randomToken(32);
    const link = new ReviewLink();
    link.ownerId = post.ownerId;
    link.brandId = post.brandId;
    link.postId = post.id;
    link.tokenHash = sha256Hex(token);
    link.expiresAt = new Date(Date.now() + hours * 3600_000);
    await this.em.persist(link).flush();
    return { id: link.id, token, url: `${this.tools.webUrl}/review/${token}`, expiresAt: link.expiresAt };
  }

  async revoke(id: string): Promise<ReviewLink> {
    const link = isUuid(id) ? await this.em.findOne(ReviewLink, { id, ...this.reach.filter() }) : null;
    if (!link) throw AppError.notFound('Review link');
    if (!link.revokedAt) {
      link.revokedAt = new Date();
      await this.em.flush();
    }
    return link;
  }

  /**
   * The post of a link while it is a suggestion. Once it is not (decided, by the link or by its
   * owner), the link shows nothing more: the owner may have changed the post since, and its media
   * URLs are fresh signatures, which a link valid for up to 720 hours would go on handing out.
   */
  async show(token: string): Promise<ReviewedPost> {
    const link = await this.usableLink(token);
    const post = await this.em.findOneOrFail(Post, { id: link.postId });
    if (post.status !== PostStatus.SUGGESTED) {
      throw new AppError(ErrorCode.CONFLICT, `This post is no longer a suggestion to review; it is ${post.status}`, {
        details: { currentState: post.status },
      });
    }
    return this.viewOf(link, post);
  }

  /** Approves or rejects the link's post exactly as its owner would; 409 once it is no longer a suggestion. */
  async decide(token: string, action: 'approve' | 'reject', comment: string | null | undefined): Promise<ReviewedPost> {
    const note = comment?.trim() || null;
    if (note && note.length > 2000) throw AppError.badInput('comment', 'is longer than 2000 characters');
    const link = await this.usableLink(token);
    const ownerReach = Reach.of({
      userId: link.ownerId,
      scopes: new Set(['suggestions.write']),
      via: 'api-key',
      brandIds: new Set([link.brandId]),
    });
    const posts = this.tools.postsIn(ownerReach);
    const decision = { actor: { type: ActorType.REVIEW_LINK, id: link.id }, comment: note };
    const post =
      action === 'approve' ? await posts.approve(link.postId, decision) : await posts.reject(link.postId, decision);
    return this.viewOf(link, post);
  }

  /**
   * The link of `token`: 404 when there is none, 410 once it expired or was revoked. Every use of a
   * token counts against the client's limit first, found or not, so tokens cannot be tried at speed;
   * here, where REST and GraphQL both arrive, one limit holds for both.
   */
  private async usableLink(token: string): Promise<ReviewLink> {
    await this.tools.perClient.consume(
      this.client,
      'Too many review requests from this client; try again later',
      this.reportRateLimit,
    );
    const link =
      token && token.length <= 128 ? await this.em.findOne(ReviewLink, { tokenHash: sha256Hex(token) }) : null;
    if (!link) throw AppError.notFound('Review link');
    if (link.revokedAt) throw new AppError(ErrorCode.GONE, 'This review link was revoked');
    if (link.expiresAt.getTime() <= Date.now()) throw new AppError(ErrorCode.GONE, 'This review link has expired');
    return link;
  }

  private async viewOf(link: ReviewLink, post: Post): Promise<ReviewedPost> {
    const brand = await this.em.findOneOrFail(Brand, { id: post.brandId });
    const ids = post.mediaIds.filter(isUuid);
    const files = ids.length
      ? await this.em.find(MediaFile, { id: { $in: ids }, ownerId: post.ownerId, status: MediaStatus.READY })
      : [];
    const media = new MediaService(this.em, this.reach, this.tools.media);
    const byId = new Map(files.map((file) => [file.id, file]));
    const mediaUrls = await Promise.all(ids.flatMap((id) => (byId.has(id) ? [media.urlOf(byId.get(id)!)] : [])));
    return {
      content: post.content,
      platforms: post.platforms,
      mediaUrls,
      scheduledAt: post.scheduledAt,
      brandName: brand.name,
      status: post.status,
      expiresAt: link.expiresAt,
    };
  }
}
