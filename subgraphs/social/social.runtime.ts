import type { JobWithMetadata } from 'pg-boss';
import type { Config } from '../../lib/config.js';
import type { EntityManager, Orm } from '../../lib/database.js';
import type { Logger } from '../../lib/logger.js';
import { RateLimits } from '../../lib/rate-limit.js';
import type { ObjectStorage } from '../../lib/storage.js';
import { imageProviderOf } from './media/ai-image.provider.js';
import { AiImageService } from './media/ai-image.service.js';
import { IntegrationService, type IntegrationSettings } from './integrations/integration.service.js';
import { TokenCipher } from './integrations/token-cipher.js';
import type { SocialRuntime } from './social.context.js';
import { MediaService } from './media/media.service.js';
import { Platforms } from './integrations/platforms/index.js';
import { PublishDeferred, PublisherService } from './publishing/publisher.service.js';
import { PUBLISH_QUEUE, PublishQueue, REFRESH_QUEUE, type PublishJob } from './publishing/publish-queue.js';

/**
 * The long-lived parts of the social service that reach outside it: platform adapters and the
 * token cipher, storage, the image provider and its rate limit, and the publisher's job queue
 * and workers. Made once per process; each request gets services bound to its own entity manager.
 */
export class Outreach {
  readonly platforms: Platforms;
  readonly cipher: TokenCipher;
  readonly publicBaseUrl: string;
  private readonly rateLimits: RateLimits;
  private readonly imageLimiter;
  private readonly imageProvider;
  private queue?: PublishQueue;

  constructor(
    readonly config: Config,
    readonly logger: Logger,
    readonly storage: ObjectStorage,
  ) {
    this.platforms = new Platforms(config);
    this.cipher = TokenCipher.fromConfig(config);
    this.publicBaseUrl = config.publicUrls.social;
    this.rateLimits = new RateLimits(config);
    this.imageLimiter = this.rateLimits.limiter('ai-image', config.env.AI_IMAGE_RATE_LIMIT, 60);
    this.imageProvider = imageProviderOf(config);
  }

  get integrationSettings(): IntegrationSettings {
    return { platforms: this.platforms, cipher: this.cipher, publicBaseUrl: this.publicBaseUrl, webUrl: this.config.env.WEB_URL, logger: this.logger };
  }

  integrations(em: EntityManager): IntegrationService {
    return new IntegrationService(em, this.integrationSettings);
  }

  media(em: EntityManager): MediaService {
    return new MediaService(em, { storage: this.storage, maxBytes: this.config.env.MEDIA_MAX_BYTES, publicBaseUrl: this.publicBaseUrl });
  }

  aiImages(em: EntityManager): AiImageService {
    return new AiImageService(this.media(em), this.imageProvider, this.imageLimiter, this.logger);
  }

  /** True when the job queue is started and its tables answer (for /health). */
  async jobsAnswer(): Promise<boolean> {
    if (!this.queue) return false;
    try {
      return (await this.queue.boss.getQueue(PUBLISH_QUEUE)) !== null;
    } catch {
      return false;
    }
  }

  /**
   * Starts the job queue over the service's database and, unless `work` is false, the workers:
   * the publisher and the token renewal that runs every minute.
   */
  async start(orm: Orm, options: { work: boolean }): Promise<{ close(): Promise<void> }> {
    const queue = await PublishQueue.start(this.config, orm, this.logger);
    this.queue = queue;
    if (options.work) {
      const log = this.logger.child({ component: 'publisher' });
      await queue.boss.work<PublishJob>(PUBLISH_QUEUE, { pollingIntervalSeconds: 1, batchSize: 1, includeMetadata: true }, async ([job]) => {
        const publisher = new PublisherService(orm.em.fork(), { ...this.integrationSettings, storage: this.storage }, log);
        try {
          const { retryCount, retryLimit } = job as JobWithMetadata<PublishJob>;
          const outcome = await publisher.run(job.data, { lastChance: retryCount >= retryLimit });
          log.info({ postId: job.data.postId, outcome }, 'publish job done');
          return { outcome };
        } catch (error) {
          if (error instanceof PublishDeferred) log.warn({ postId: job.data.postId, reason: error.message }, 'publish deferred');
          throw error;
        }
      });
      await queue.boss.work(REFRESH_QUEUE, { pollingIntervalSeconds: 5 }, async () => this.integrations(orm.em.fork()).refreshDue());
      await queue.boss.schedule(REFRESH_QUEUE, '* * * * *');
    }
    return {
      close: async () => {
        await queue.stop();
        this.queue = undefined;
        await this.rateLimits.close();
      },
    };
  }
}

/** The social subgraph's start hook: the job queue, and the workers unless PUBLISH_WORKER=off. */
export async function startOutreach(runtime: SocialRuntime, orm: Orm) {
  const started = await runtime.outreach.start(orm, { work: runtime.outreach.config.env.PUBLISH_WORKER === 'on' });
  runtime.healthChecks.push({ name: 'jobs', check: () => runtime.outreach.jobsAnswer() });
  return started;
}
