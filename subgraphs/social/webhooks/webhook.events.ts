import type { SocialScope } from '../access/scopes.js';
import type { ContentEvent } from '../content/content-event.entity.js';
import { ContentEventType } from '../content/content-event.entity.js';
import { PostStatus } from '../content/post.entity.js';
import type { WebhookOutbox } from './webhook.entity.js';

/** Every event type a webhook may ask for: the catalogue of docs/api.md (Webhooks). */
export const WEBHOOK_EVENT_TYPES = [
  'post.created',
  'post.updated',
  'post.deleted',
  'post.suggested',
  'post.approved',
  'post.rejected',
  'post.rescheduled',
  'post.published',
  'post.failed',
  'integration.needs_reconnect',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * The scope that reads what each event type carries. A receiver gets that content, so subscribing
 * a webhook to the type, pointing a webhook that has it at another URL, or sending one of its events
 * again needs this scope besides settings.write: post events carry the post (its content),
 * `integration.needs_reconnect` the platform account and its error.
 */
export const WEBHOOK_EVENT_SCOPES: Readonly<Record<WebhookEventType, SocialScope>> = {
  'post.created': 'posts.read',
  'post.updated': 'posts.read',
  'post.deleted': 'posts.read',
  'post.suggested': 'posts.read',
  'post.approved': 'posts.read',
  'post.rejected': 'posts.read',
  'post.rescheduled': 'posts.read',
  'post.published': 'posts.read',
  'post.failed': 'posts.read',
  'integration.needs_reconnect': 'integrations.read',
};

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

/** One event as receivers see it, before it is addressed to any webhook. */
export interface WebhookEvent {
  type: WebhookEventType;
  /** Null for what belongs to the owner rather than to one brand (integrations). */
  brandId: string | null;
  occurredAt: Date;
  data: Record<string, unknown>;
}

const statusOf = (snapshot: Record<string, unknown> | null) => (snapshot?.status as string | undefined) ?? null;

/**
 * The webhook events one audit event stands for. Most map one to one; a post that becomes a
 * suggestion (made as one, or set to one) is also `post.suggested`; of the publisher's steps only
 * the end of a post (`post.published`) and each failed platform (`post.failed`) are told.
 */
export function webhookTypesOf(event: Pick<ContentEvent, 'type' | 'before' | 'after'>): WebhookEventType[] {
  const becameSuggested =
    statusOf(event.after) === PostStatus.SUGGESTED && statusOf(event.before) !== PostStatus.SUGGESTED;
  switch (event.type) {
    case ContentEventType.CREATED:
      return becameSuggested ? ['post.created', 'post.suggested'] : ['post.created'];
    case ContentEventType.UPDATED:
    case ContentEventType.EDITED:
      return becameSuggested ? ['post.updated', 'post.suggested'] : ['post.updated'];
    case ContentEventType.DELETED:
      return ['post.deleted'];
    case ContentEventType.APPROVED:
      return ['post.approved'];
    case ContentEventType.REJECTED:
      return ['post.rejected'];
    case ContentEventType.RESCHEDULED:
    case ContentEventType.RETRIED:
      return ['post.rescheduled'];
    case ContentEventType.PUBLISHED:
      // One platform done; the post as a whole is published only when its status says so.
      return statusOf(event.after) === PostStatus.PUBLISHED ? ['post.published'] : [];
    case ContentEventType.PUBLISH_FAILED:
      return ['post.failed'];
    case ContentEventType.PUBLISHING:
      return [];
  }
}

/** What receivers get of a post event: the post's id, brand and status, the fields as they are now, who did it. */
function postData(event: ContentEvent): Record<string, unknown> {
  const snapshot = event.after ?? event.before ?? {};
  const { platform, platformPostId, url, error, reviewComment, ...post } = snapshot;
  const data: Record<string, unknown> = {
    postId: event.contentId,
    brandId: event.brandId,
    status: event.after ? (post.status ?? null) : 'deleted',
    content: post.content ?? null,
    platforms: post.platforms ?? [],
    mediaIds: post.mediaIds ?? [],
    scheduledAt: post.scheduledAt ?? null,
    campaignId: post.campaignId ?? null,
    actor: { type: event.actorType, id: event.actorId },
  };
  if (event.type === ContentEventType.PUBLISHED || event.type === ContentEventType.PUBLISH_FAILED) {
    Object.assign(data, {
      platform: platform ?? null,
      platformPostId: platformPostId ?? null,
      url: url ?? null,
      error: error ?? null,
    });
  }
  if (reviewComment !== undefined) data.comment = reviewComment;
  return data;
}

/** The events of one outbox row; `contentEvent` is the audit event it points at (absent for integrations). */
export function eventsOfOutbox(row: WebhookOutbox, contentEvent: ContentEvent | null): WebhookEvent[] {
  if (row.source === 'integration') {
    return [
      { type: 'integration.needs_reconnect', brandId: null, occurredAt: row.occurredAt, data: { ...(row.data ?? {}) } },
    ];
  }
  if (!contentEvent) return [];
  return webhookTypesOf(contentEvent).map((type) => ({
    type,
    brandId: contentEvent.brandId,
    occurredAt: contentEvent.occurredAt,
    data: postData(contentEvent),
  }));
}
