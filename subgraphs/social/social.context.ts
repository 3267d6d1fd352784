import type { EntityManager } from '#lib/data/database.js';
import type { AppError } from '#lib/errors.js';
import { bearerCallerOf, type Principal } from '#lib/identity.js';
import { batchLoader } from '#lib/data/loaders.js';
import type { AnswerExtensionsContext, SubgraphRequest } from '#lib/subgraph/local-subgraph.js';
import { reportInto } from '#lib/http/rate-limit.js';
import { ApiKeyService, authenticateApiKey } from './access/api-key.service.js';
import { BrandService } from './access/brand.service.js';
import { Reach } from './access/reach.js';
import { CampaignService } from './content/campaign.service.js';
import type { ContentContext } from './content/content.context.js';
import { ContentEventService } from './content/content-event.service.js';
import { PostService } from './content/post.service.js';
import { RollupService } from './content/rollup.service.js';
import type { HealthContext } from './health/health.context.js';
import { IntegrationService } from './integrations/integration.service.js';
import type { IntegrationsContext } from './integrations/integrations.context.js';
import { AiImageService } from './media/ai-image.service.js';
import type { MediaContext } from './media/media.context.js';
import { mediaInReach, MediaService } from './media/media.service.js';
import { PublishAttemptService } from './publishing/publish-attempt.service.js';
import type { PublishingContext } from './publishing/publishing.context.js';
import type { SocialRuntime } from './social.runtime.js';
import { ReviewLinkService } from './review/review-link.service.js';
import type { ReviewContext } from './review/review.context.js';
import { WebhookService } from './webhooks/webhook.service.js';
import type { WebhooksContext } from './webhooks/webhooks.context.js';

/**
 * Everything a social resolver may use during one request: one entity manager fork, one caller,
 * services bound to both, and the request's DataLoaders. Each feature folder declares the subset it
 * uses (`<feature>.context.ts`); this interface combines them all.
 */
export interface SocialContext
  extends
    ContentContext,
    PublishingContext,
    IntegrationsContext,
    MediaContext,
    HealthContext,
    WebhooksContext,
    ReviewContext,
    AnswerExtensionsContext {
  em: EntityManager;
}

/**
 * Who is calling: a bearer JWT when one is sent and valid, else an `X-API-Key`. A key that is
 * unknown or revoked leaves the caller anonymous, and the shield returns UNAUTHENTICATED; a bearer
 * token that was rejected (and no key that identifies a caller) sets `refusal`, which explains why.
 */
async function callerOf(
  runtime: SocialRuntime,
  em: EntityManager,
  req: SubgraphRequest,
): Promise<{ principal: Principal | null; refusal?: AppError }> {
  const bearer = await bearerCallerOf(runtime.identity, req.headers.authorization);
  if (bearer.principal) return bearer;
  const header = req.headers['x-api-key'];
  const key = Array.isArray(header) ? header[0] : header;
  const principal = key ? await authenticateApiKey(em, key.trim()) : null;
  return principal ? { principal } : { principal: null, refusal: bearer.refusal };
}

/** The posts service bound to one reach (the caller's, or a review link's) on the request's `em`. */
function postsWithin(em: EntityManager, runtime: SocialRuntime, reach: Reach): PostService {
  return new PostService(em, reach, new BrandService(em, reach), runtime.queue, (tx, ids) =>
    mediaInReach(tx, reach, ids),
  );
}

/** One request's context on `em`, the request's own fork: the caller (bearer or API key), the services bound to their reach, the loaders. */
export async function createSocialContext(
  runtime: SocialRuntime,
  em: EntityManager,
  req: SubgraphRequest,
): Promise<SocialContext> {
  const { principal, refusal } = await callerOf(runtime, em, req);
  const answerExtensions: Record<string, unknown> = {};
  const reach = Reach.of(principal);
  const brands = new BrandService(em, reach);
  const campaigns = new CampaignService(em, reach, brands);
  const events = new ContentEventService(em, reach, runtime.contentFeed);
  const posts = postsWithin(em, runtime, reach);
  const attempts = new PublishAttemptService(em);
  const media = new MediaService(em, reach, runtime.media);
  return {
    principal,
    refusal,
    answerExtensions,
    em,
    brands,
    apiKeys: new ApiKeyService(em, reach),
    posts,
    campaigns,
    events,
    rollups: new RollupService(em, reach),
    integrations: new IntegrationService(em, reach, runtime.integrations),
    media,
    aiImages: new AiImageService(
      reach,
      media,
      runtime.images.provider,
      runtime.images.limiter,
      runtime.logger,
      reportInto(answerExtensions),
    ),
    healthChecks: runtime.healthChecks,
    webhooks: new WebhookService(em, reach, { ...runtime.webhooks, boss: runtime.queue.boss }),
    reviewLinks: new ReviewLinkService(
      em,
      reach,
      {
        webUrl: runtime.integrations.webUrl,
        media: runtime.media,
        // A decision by review link applies the post rules within the link's brand, as its owner: a reach of its own.
        postsIn: (within) => postsWithin(em, runtime, within),
        perClient: runtime.reviewLinks.perClient,
      },
      req.client ?? 'unknown',
      reportInto(answerExtensions),
    ),
    brandById: batchLoader(
      (ids) => brands.findMany(ids),
      () => null,
    ),
    postById: batchLoader(
      (ids) => posts.findMany(ids),
      () => null,
    ),
    eventsByContent: batchLoader(
      (ids) => events.forContents(ids),
      () => [],
    ),
    attemptsByPost: batchLoader(
      (ids) => attempts.forPosts(ids),
      () => [],
    ),
    postsByCampaign: batchLoader(
      (ids) => campaigns.postsOf(ids),
      () => [],
    ),
  };
}
