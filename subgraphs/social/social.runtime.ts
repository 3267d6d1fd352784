import { jobQueueConnections } from '#lib/data/job-queue.js';
import type { Config } from '#lib/config.js';
import { databaseAnswers, type Orm } from '#lib/data/database.js';
import type { Identity } from '#lib/identity.js';
import type { Logger } from '#lib/observability/logger.js';
import { RateLimits, type RateLimiter } from '#lib/http/rate-limit.js';
import type { Deps } from '#lib/service.js';
import { createStorage } from '#lib/storage/create-storage.js';
import { startUploadSweeper } from '#lib/storage/uploads.js';
import { sweepExpiredKeys } from '#lib/data/idempotency.js';
import { EventFeed } from '#lib/data/event-feed.js';
import type { Post } from './content/post.entity.js';
import { postsById } from './content/posts-by-id.js';
import { ContentEvent } from './content/content-event.entity.js';
import type { HealthCheck } from './health/health-checks.js';
import type { IntegrationSettings } from './integrations/integration.service.js';
import { Platforms } from './integrations/platforms/index.js';
import { TokenCipher } from './integrations/token-cipher.js';
import { imageProviderOf, type ImageProvider } from './media/ai-image.provider.js';
import { sweepMediaUploads, type MediaSettings } from './media/media.service.js';
import { PublishQueue } from './publishing/publish-queue.js';
import { REVIEW_PER_CLIENT, REVIEW_WINDOW_SECONDS } from './review/review-link.service.js';
import type { PublisherTools } from './publishing/publisher.service.js';
import { startPublisherWorkers } from './publishing/publisher.worker.js';
import {
  prepareWebhookQueue,
  startWebhookWorkers,
  webhookSettingsOf,
  type WebhookSettings,
} from './webhooks/webhook.delivery.js';

/** What the social subgraph keeps for its whole life; each request's context is built on it. */
export interface SocialRuntime {
  /** Its job queue's own pool (the connection budget). */
  connections: Record<string, number>;
  identity: Identity;
  logger: Logger;
  /** Platform accounts: the adapters on offer, the token cipher, where OAuth calls back and where it sends the browser. */
  integrations: IntegrationSettings;
  media: MediaSettings;
  images: { provider: ImageProvider | null; limiter: RateLimiter };
  /** Review links: the limit per client of their public fields, counted here for REST and GraphQL alike. */
  reviewLinks: { perClient: RateLimiter };
  /** The publisher's job queue, which every change of a post's state or time follows. */
  queue: PublishQueue;
  /** Signed webhooks: their secrets' cipher, URL policy and delivery timing (the queue is the publisher's). */
  webhooks: WebhookSettings;
  /** The content audit log as it grows, which `contentEvents` subscriptions follow (one reader per process). */
  contentFeed: EventFeed<ContentEvent, Post>;
  /** What `/health` checks: the database, storage and the job queue. */
  healthChecks: HealthCheck[];
  close(): Promise<void>;
}

/** What the publisher works with, the same in the API's process and in `npm run worker` processes. */
export function publisherToolsOf(config: Config): PublisherTools {
  return { platforms: new Platforms(config), cipher: TokenCipher.fromConfig(config), storage: createStorage(config) };
}

/**
 * Made once the database is open: the job queue lives in it, starts after it and stops before it.
 * This process also works on the queue unless `PUBLISH_WORKER=off` leaves that to workers apart.
 */
export async function createSocialRuntime({ config, logger, identity }: Deps, orm: Orm): Promise<SocialRuntime> {
  const tools = publisherToolsOf(config);
  const limits = new RateLimits(config);
  const queue = await PublishQueue.start(config, orm, logger);
  const webhooks = webhookSettingsOf(config);
  let webhookWorkers: { stop(): Promise<void> } | undefined;
  const media: MediaSettings = {
    storage: tools.storage,
    maxBytes: config.env.MEDIA_MAX_BYTES,
    publicUrl: config.publicUrls.social,
  };
  // Uploads nobody read before their URL expired are committed or dropped, rows and bytes.
  // The same round drops Idempotency-Key records past their window, of callers who never came back.
  const sweeper = startUploadSweeper({
    name: 'social',
    logger,
    sweep: async (now) => {
      await sweepExpiredKeys(orm.em.fork());
      return sweepMediaUploads(orm.em.fork(), media, now);
    },
  });
  let contentFeed: EventFeed<ContentEvent, Post> | undefined;
  const close = async () => {
    await contentFeed?.close();
    await sweeper.stop();
    await webhookWorkers?.stop();
    await queue.stop();
    await limits.close();
  };
  try {
    // The post each event names, read once for all subscribers of a batch (`Subscription.contentEvents { post }`).
    contentFeed = await EventFeed.forEntity(config, orm, ContentEvent, 'social', logger, {
      idOf: (event) => event.contentId,
      load: (ids) => postsById(orm.em.fork(), ids),
    });
    await prepareWebhookQueue(queue.boss);
    if (config.env.PUBLISH_WORKER === 'on') {
      await startPublisherWorkers(queue, orm, tools, logger);
      webhookWorkers = await startWebhookWorkers(queue.boss, orm, webhooks, logger);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return {
    connections: { queue: jobQueueConnections(config) },
    identity,
    logger,
    integrations: {
      platforms: tools.platforms,
      cipher: tools.cipher,
      publicUrl: config.publicUrls.social,
      webUrl: config.env.WEB_URL.replace(/\/+$/, ''),
      logger,
    },
    media,
    images: {
      provider: imageProviderOf(config),
      limiter: limits.limiter('ai-image', config.env.AI_IMAGE_RATE_LIMIT, 60),
    },
    reviewLinks: { perClient: limits.limiter('social-review-client', REVIEW_PER_CLIENT, REVIEW_WINDOW_SECONDS) },
    queue,
    webhooks,
    contentFeed,
    healthChecks: [
      { name: 'database', check: () => databaseAnswers(orm) },
      { name: 'storage', check: () => tools.storage.check() },
      { name: 'jobs', check: () => queue.answers() },
    ],
    close,
  };
}
