import { z } from 'zod';
import { healthBody, idSchema, instantSchema, pageOf, pageQuery } from '#lib/rest/rest-schemas.js';
import { inputOf } from '#lib/rest/rest-bodies.js';
import { MAX_PAGE_SIZE } from '#lib/data/pagination.js';
import { graphqlEnumList, restEnum, withGraphQLEnums, withRestEnums } from '#lib/rest/rest-enums.js';
import { withIsoInstants } from '#lib/rest/rest-instants.js';
import { Platform } from './operations.generated.js';

/**
 * The bodies of the social publishing REST contract (the field names legacy clients rely on), once: the routes'
 * OpenAPI documentation, and the shape the adapter checks a JSON body against. What a value may
 * be (a time in the future, a brand of the caller) is the social subgraph's rule.
 */

const POST_STATUSES = ['draft', 'suggested', 'rejected', 'queued', 'publishing', 'published', 'failed'] as const;
const postStatus = z.enum(POST_STATUSES);
const nullableInstant = instantSchema.nullable();

/** The platforms' REST words: the graph's `Platform` enum in lower case (`mastodon`, `google_business`). */
const PLATFORM_WORDS = restEnum(Object.values(Platform));
const platform = z
  .enum(PLATFORM_WORDS)
  .meta({ id: 'Platform', description: 'A social network; only some are published to (see GET /api/integrations)' });
const platforms = z.array(platform);
/** What a request may send: those words in any case, with spaces around (`" Mastodon "`, `X`), as REST always read them. */
const platformNames = z.array(z.string());
const PLATFORM_NAMES = `in any case (e.g. mastodon, X), of ${PLATFORM_WORDS.join(', ')}`;

export const postSchema = z
  .object({
    id: idSchema,
    brandId: idSchema,
    campaignId: idSchema.nullable(),
    content: z.string(),
    platforms: platforms.meta({ description: 'Target platforms' }),
    mediaIds: z.array(idSchema),
    scheduledAt: nullableInstant.meta({ description: 'When it is to be published' }),
    status: postStatus,
    publishedAt: nullableInstant,
    createdAt: instantSchema,
    updatedAt: instantSchema,
  })
  .meta({ id: 'Post', description: 'A post (a content item of the content operations)' });

const optional = <T extends z.ZodType>(schema: T, description: string) => schema.nullish().meta({ description });

export const postInputSchema = inputOf(postSchema, {
  brandId: optional(idSchema, 'Required when the caller has several brands'),
  campaignId: optional(idSchema, 'A campaign of the same brand'),
  content: optional(z.string(), 'Text of the post (required on create)'),
  platforms: optional(platformNames, `Target platforms, ${PLATFORM_NAMES}`),
  mediaIds: optional(z.array(idSchema), 'Ready media files of the same owner'),
  scheduledAt: optional(z.string(), 'When to publish: ISO 8601 with a zone, e.g. 2030-01-31T09:00:00+01:00'),
  status: optional(
    postStatus,
    'On create: draft (the default) or suggested; a post with scheduledAt and no status is queued',
  ),
}).meta({ id: 'PostInput', description: 'A post to create (content required), or the fields to change' });

export const contentItemSchema = postSchema
  .extend({ contentId: idSchema.meta({ description: "The post's id" }) })
  .meta({ id: 'ContentItem' });

const eventSchema = z
  .object({
    id: idSchema,
    type: z.enum([
      'created',
      'updated',
      'deleted',
      'edited',
      'approved',
      'rejected',
      'rescheduled',
      'retried',
      'publishing',
      'published',
      'publish_failed',
    ]),
    contentId: idSchema,
    brandId: idSchema,
    actor: z
      .object({ type: z.enum(['user', 'api_key', 'system']), id: z.string() })
      .meta({ description: 'Who made the change' }),
    occurredAt: instantSchema,
    before: z.record(z.string(), z.unknown()).nullable().meta({ description: 'The fields that changed, before' }),
    after: z.record(z.string(), z.unknown()).nullable().meta({ description: 'The fields that changed, after' }),
  })
  .meta({ id: 'ContentEvent', description: 'An audit event of a content operation' });

const attemptSchema = z
  .object({
    id: idSchema,
    platform,
    status: z.enum(['pending', 'succeeded', 'failed']),
    platformPostId: z.string().nullable(),
    url: z.string().nullable(),
    error: z.string().nullable(),
    attemptedAt: instantSchema,
    finishedAt: nullableInstant,
  })
  .meta({ id: 'PublishAttempt', description: 'One attempt to publish on one platform' });

export const contentItemDetailSchema = contentItemSchema
  .extend({
    events: z.array(eventSchema).meta({ description: 'Its audit events' }),
    attempts: z.array(attemptSchema).meta({ description: 'Its publish attempts' }),
    publishAttempts: z.array(attemptSchema).meta({ description: 'The same as attempts' }),
  })
  .meta({ id: 'ContentItemDetail' });

export const contentEditSchema = inputOf(contentItemSchema, {
  content: optional(z.string(), 'New text'),
  platforms: optional(platformNames, `Target platforms, ${PLATFORM_NAMES}`),
  mediaIds: optional(z.array(idSchema), 'Ready media files'),
  scheduledAt: optional(z.string(), 'ISO 8601 with a zone'),
}).meta({ id: 'ContentEdit', description: 'Fields of a draft or suggestion draft to change' });

export const rescheduleSchema = z
  .strictObject({ scheduledAt: z.string().meta({ description: 'The new time: ISO 8601 with a zone, in the future' }) })
  .meta({ id: 'Reschedule' });

export const retrySchema = z
  .strictObject({
    force: z.boolean().optional().meta({
      description:
        'Retry although the last attempt may have been published (its outcome is unknown): it may post twice',
    }),
  })
  .meta({ id: 'Retry' });

export const eventPageSchema = z
  .object({
    data: z.array(eventSchema),
    nextCursor: z.string().nullable().meta({ description: 'Pass as cursor for the next events; null at the end' }),
    total: z.int().meta({ description: 'Events matching the filter' }),
  })
  .meta({ id: 'ContentEventPage' });

export const dailySchema = z
  .object({
    timezone: z.string(),
    from: z.string().meta({ format: 'date' }),
    to: z.string().meta({ format: 'date' }),
    days: z.array(
      z.object({
        date: z.string().meta({ format: 'date' }),
        total: z.int(),
        byStatus: z.record(z.string(), z.int()).meta({ description: 'Count by post status' }),
        byPlatform: z.record(z.string(), z.int()).meta({ description: 'Count by platform' }),
      }),
    ),
  })
  .meta({ id: 'DailyRollups', description: 'Posts per calendar day in the time zone' });

export const brandSchema = z
  .object({ id: idSchema, name: z.string(), createdAt: instantSchema, updatedAt: instantSchema })
  .meta({ id: 'Brand' });

export const brandInputSchema = inputOf(brandSchema, {
  name: optional(z.string(), 'Name of the brand (required)'),
  timezone: optional(z.string(), 'IANA time zone of the brand, e.g. Europe/Berlin'),
}).meta({ id: 'BrandInput' });

export const mediaFileSchema = z
  .object({
    id: idSchema,
    url: z.string().meta({ description: 'Where to download it (signed, short-lived)' }),
    filename: z.string(),
    contentType: z.string(),
    size: z.int(),
    status: z.enum(['pending', 'ready']),
    source: z.enum(['upload', 'ai']),
    prompt: z.string().nullable().meta({ description: 'The prompt of an AI image' }),
    brandId: idSchema.nullable(),
    createdAt: instantSchema,
    readyAt: nullableInstant,
  })
  .meta({ id: 'MediaFile' });

export const mediaUploadInputSchema = z
  .strictObject({
    filename: z.string(),
    contentType: z.string().meta({ description: 'An image or video type' }),
    size: z.int().meta({ description: 'Bytes the upload will send' }),
    brandId: optional(idSchema, 'The brand the file is for'),
  })
  .meta({ id: 'MediaUploadInput' });

export const uploadGrantSchema = z
  .object({
    id: idSchema,
    uploadUrl: z.string().meta({ description: 'Where to PUT the bytes' }),
    method: z.literal('PUT'),
    headers: z.record(z.string(), z.string()).meta({ description: 'Headers the PUT must send' }),
    expiresAt: instantSchema,
  })
  .meta({ id: 'MediaUploadGrant' });

export const generateImageSchema = z
  .strictObject({
    prompt: z.string(),
    size: optional(z.string(), 'e.g. 1024x1024'),
    brandId: optional(idSchema, 'The brand the image is for'),
  })
  .meta({ id: 'GenerateImageInput' });

const integrationSchema = z
  .object({
    id: idSchema,
    platform,
    status: z.enum(['connected', 'needs_reconnect']),
    accountId: z.string(),
    accountName: z.string(),
    accountUrl: z.string().nullable(),
    tokenExpiresAt: nullableInstant,
    scope: z.string().nullable(),
    lastError: z.string().nullable(),
    lastRefreshedAt: nullableInstant,
    connectedAt: instantSchema,
    updatedAt: instantSchema,
  })
  .meta({ id: 'Integration', description: 'A connected platform account (never its tokens)' });

export const integrationsSchema = z
  .object({
    data: z.array(integrationSchema),
    total: z.int(),
    available: platforms.meta({ description: 'Platforms that can be connected here' }),
  })
  .meta({ id: 'Integrations' });

export const socialHealthSchema = healthBody.meta({ id: 'SocialHealth' });

export const postPage = pageOf(postSchema, 'Post');
export const queuePage = pageOf(contentItemSchema, 'ContentItem');
export const brandPage = pageOf(brandSchema, 'Brand');
export const mediaPage = pageOf(mediaFileSchema, 'MediaFile');

const brandFilter = idSchema.optional().meta({ description: 'Only this brand' });

export const postQuery = pageQuery.extend({
  brandId: brandFilter,
  status: postStatus.optional().meta({ description: 'Only posts in this status' }),
});
export const queueQuery = pageQuery.extend({
  brandId: brandFilter,
  status: z
    .string()
    .optional()
    .meta({
      description: `Statuses to list, comma-separated (default queued,publishing,failed), of ${POST_STATUSES.join(', ')}`,
    }),
});
export const dailyQuery = z.object({
  from: z
    .string()
    .optional()
    .meta({ format: 'date', description: 'First day, YYYY-MM-DD, inclusive (default: six days before to)' }),
  to: z.string().optional().meta({
    format: 'date',
    description: `Last day, YYYY-MM-DD, inclusive (default: today); the range spans at most 366 days`,
  }),
  timezone: z.string().optional().meta({ description: 'IANA time zone of the days (default UTC)' }),
  brandId: brandFilter,
});
export const eventsQuery = z.object({
  limit: z.int().min(1).max(MAX_PAGE_SIZE).optional().meta({ description: 'Events to return, 1 to 100 (default 20)' }),
  cursor: z.string().optional().meta({ description: 'nextCursor of the previous answer' }),
  contentId: idSchema.optional().meta({ description: 'Only events of this content item' }),
  type: eventSchema.shape.type.optional().meta({ description: 'Only events of this type' }),
});

export const reviewedPostSchema = z
  .object({
    content: z.string(),
    platforms,
    mediaUrls: z.array(z.string()).meta({ description: 'Short-lived URLs of its media' }),
    scheduledAt: nullableInstant,
    brandName: z.string(),
    status: postStatus,
    expiresAt: instantSchema.meta({ description: 'When the review link expires' }),
  })
  .meta({ id: 'ReviewedPost', description: 'The post a review link shows (no account needed)' });

export const reviewDecisionSchema = z
  .strictObject({ comment: z.string().nullish().meta({ description: 'A note for the team' }) })
  .meta({ id: 'ReviewDecision' });

// --- Bodies between REST words and the graph's ---

/**
 * A post's body (create, update, or the edit of a content item) as the graph takes it: `status` and
 * `platforms` as the graph's enum values, `scheduledAt` as an instant. REST reads platform names in
 * any case and with spaces around (`" Mastodon "`, `X`); a name of no platform is a 400 on `platforms`.
 */
export function postInput(body: Record<string, unknown>): Record<string, unknown> {
  const input = withIsoInstants(withGraphQLEnums(body, 'status'), 'scheduledAt');
  if ('platforms' in input) input.platforms = graphqlEnumList(input.platforms, Platform, 'platforms', 'platforms');
  return input;
}

/** A post, content item or reviewed post as its REST body writes it: `status` and `platforms` in lower case. */
export const restPost = <Item extends { status: string; platforms: readonly string[] }>(item: Item) =>
  withRestEnums(item, 'status', 'platforms');

/** A thing of one platform (an integration, a publish attempt) as its REST body writes it: `status` and `platform` in lower case. */
export const restOfPlatform = <Item extends { status: string; platform: string }>(item: Item) =>
  withRestEnums(item, 'status', 'platform');

/** A media file as its REST body writes it: `status` and `source` in lower case. */
export const restMedia = <Media extends { status: string; source: string }>(media: Media) =>
  withRestEnums(media, 'status', 'source');

/** An audit event as its REST body writes it: `type` and its actor's `type` in lower case. */
export const restEvent = <Event extends { type: string; actor: { type: string } }>(event: Event) => ({
  ...withRestEnums(event, 'type'),
  actor: { ...event.actor, type: restEnum(event.actor.type) },
});
