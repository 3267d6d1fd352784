import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { ActorType, ContentEvent, ContentEventType } from '#subgraphs/social/content/content-event.entity.js';
import { WebhookOutbox } from '#subgraphs/social/webhooks/webhook.entity.js';
import { eventsOfOutbox, webhookTypesOf } from '#subgraphs/social/webhooks/webhook.events.js';

const snapshot = (status: string, extra: Record<string, unknown> = {}) => ({
  brandId: 'b1',
  campaignId: null,
  content: 'text',
  platforms: ['mastodon', 'x'],
  mediaIds: [],
  scheduledAt: null,
  status,
  ...extra,
});

function auditEvent(
  type: ContentEventType,
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): ContentEvent {
  return Object.assign(new ContentEvent(), {
    type,
    before,
    after,
    contentId: 'p1',
    brandId: 'b1',
    ownerId: 'o1',
    actorType: ActorType.SYSTEM,
    actorId: 'publisher',
  });
}

/** Which webhook events each audit event stands for, and what their data says. */
describe('webhook events of audit events', () => {
  it('maps every kind of change to its event type', () => {
    const cases: Array<[ContentEventType, string | null, string | null, string[]]> = [
      [ContentEventType.CREATED, null, 'draft', ['post.created']],
      [ContentEventType.CREATED, null, 'suggested', ['post.created', 'post.suggested']],
      [ContentEventType.UPDATED, 'draft', 'suggested', ['post.updated', 'post.suggested']],
      [ContentEventType.EDITED, 'suggested', 'suggested', ['post.updated']],
      [ContentEventType.DELETED, 'draft', null, ['post.deleted']],
      [ContentEventType.APPROVED, 'suggested', 'queued', ['post.approved']],
      [ContentEventType.REJECTED, 'suggested', 'rejected', ['post.rejected']],
      [ContentEventType.RESCHEDULED, 'failed', 'queued', ['post.rescheduled']],
      [ContentEventType.RETRIED, 'failed', 'queued', ['post.rescheduled']],
      [ContentEventType.PUBLISHING, 'queued', 'publishing', []],
      // One platform out, the post not yet: nothing; the post out on every platform: post.published.
      [ContentEventType.PUBLISHED, 'publishing', 'publishing', []],
      [ContentEventType.PUBLISHED, 'publishing', 'published', ['post.published']],
      [ContentEventType.PUBLISH_FAILED, 'publishing', 'publishing', ['post.failed']],
      [ContentEventType.PUBLISH_FAILED, 'publishing', 'failed', ['post.failed']],
    ];
    for (const [type, from, to, expected] of cases) {
      expect([
        type,
        from,
        to,
        webhookTypesOf(auditEvent(type, from ? snapshot(from) : null, to ? snapshot(to) : null)),
      ]).toEqual([type, from, to, expected]);
    }
  });

  it('tells a failed platform with its error, and a deletion as status deleted', () => {
    const row = Object.assign(new WebhookOutbox(), {
      source: 'content_event',
      sourceId: 'e1',
      ownerId: 'o1',
      brandId: 'b1',
      occurredAt: new Date(),
    });
    const failed = auditEvent(
      ContentEventType.PUBLISH_FAILED,
      snapshot('publishing'),
      snapshot('failed', { platform: 'x', error: 'the x API answered 403', url: null }),
    );
    expect(eventsOfOutbox(row, failed)).toEqual([
      expect.objectContaining({
        type: 'post.failed',
        brandId: 'b1',
        data: expect.objectContaining({
          postId: 'p1',
          brandId: 'b1',
          status: 'failed',
          platform: 'x',
          error: 'the x API answered 403',
          actor: { type: 'system', id: 'publisher' },
        }),
      }),
    ]);
    const deleted = auditEvent(ContentEventType.DELETED, snapshot('draft'), null);
    expect(eventsOfOutbox(row, deleted)[0].data).toMatchObject({ postId: 'p1', status: 'deleted', content: 'text' });
    expect(eventsOfOutbox(row, null)).toEqual([]);
  });
});
