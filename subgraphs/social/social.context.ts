import type { IncomingMessage } from 'node:http';
import DataLoader from 'dataloader';
import type { EntityManager } from '../../lib/database.js';
import { AppError, ErrorCode } from '../../lib/errors.js';
import { bearerToken, optionalBearerPrincipal, type Principal } from '../../lib/identity.js';
import type { Deps } from '../../lib/service.js';
import type { AuthContext } from '../../lib/shield.js';
import type { ObjectStorage } from '../../lib/storage.js';
import { ApiKeyService } from './access/api-key.service.js';
import type { Brand } from './access/brand.entity.js';
import { BrandService } from './access/brand.service.js';
import { CampaignService } from './content/campaign.service.js';
import type { ContentEvent } from './content/content-event.entity.js';
import { ContentEventService } from './content/content-event.service.js';
import type { Post } from './content/post.entity.js';
import { PostService } from './content/post.service.js';
import { PublishAttemptService } from './publishing/publish-attempt.service.js';
import type { PublishAttempt } from './publishing/publish-attempt.entity.js';
import { reachOf } from './access/scopes.js';
import type { HealthCheck } from './health/health-checks.js';
import type { AiImageService } from './media/ai-image.service.js';
import type { IntegrationService } from './integrations/integration.service.js';
import type { MediaService } from './media/media.service.js';
import type { Outreach } from './social.runtime.js';

/**
 * What the social subgraph is started with, beyond the platform's deps. Parts that run beside
 * the API (the publisher's job queue, say) add a named check to `healthChecks`, and `/health`
 * reports it with the database and storage.
 */
export interface SocialRuntime {
  deps: Deps;
  storage: ObjectStorage;
  healthChecks: HealthCheck[];
  /** Platform integrations, media, AI images and the publisher's queue (outreach.ts). */
  outreach: Outreach;
}

/**
 * Everything a social resolver may use during one request: one entity manager fork, one
 * principal, services bound to both, and the request's DataLoaders. Services are made on first
 * use and only for a signed-in caller; the shield has already refused anonymous calls by then.
 * New features add their service as another lazy getter here.
 */
export interface SocialContext extends AuthContext {
  em: EntityManager;
  runtime: SocialRuntime;
  /** The principal, or UNAUTHENTICATED (for services, which never run anonymously). */
  signedIn(): Principal;
  readonly brands: BrandService;
  readonly posts: PostService;
  readonly campaigns: CampaignService;
  readonly events: ContentEventService;
  readonly attempts: PublishAttemptService;
  readonly apiKeys: ApiKeyService;
  readonly integrations: IntegrationService;
  readonly media: MediaService;
  readonly aiImages: AiImageService;
  readonly loaders: SocialLoaders;
}

export interface SocialLoaders {
  brandById: DataLoader<string, Brand | null>;
  eventsByContent: DataLoader<string, ContentEvent[]>;
  attemptsByPost: DataLoader<string, PublishAttempt[]>;
  postsByCampaign: DataLoader<string, Post[]>;
}

/**
 * Who is calling: a bearer JWT when one is sent and valid, else an `X-API-Key`. A key that is
 * unknown or revoked leaves the caller anonymous, and the shield answers UNAUTHENTICATED.
 */
export async function resolveSocialPrincipal(deps: Deps, em: EntityManager, req: IncomingMessage): Promise<Principal | null> {
  const authorization = req.headers.authorization;
  if (bearerToken(authorization)) {
    const principal = await optionalBearerPrincipal(deps.identity, authorization);
    if (principal) return principal;
  }
  const header = req.headers['x-api-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (!key) return null;
  return new ApiKeyService(em).authenticate(key.trim());
}

/**
 * One request's context. Services are getters on the prototype, made on first use: Apollo copies
 * the context's own properties per request, which would run (and fail) getters defined on the object.
 */
class SocialRequestContext implements SocialContext {
  private readonly made = new Map<string, unknown>();

  constructor(
    readonly runtime: SocialRuntime,
    readonly em: EntityManager,
    readonly principal: Principal | null,
  ) {}

  signedIn(): Principal {
    if (!this.principal) throw new AppError(ErrorCode.UNAUTHENTICATED, 'Authentication required');
    return this.principal;
  }

  private once<T>(name: string, make: () => T): T {
    if (!this.made.has(name)) this.made.set(name, make());
    return this.made.get(name) as T;
  }

  get brands(): BrandService {
    return this.once('brands', () => new BrandService(this.em, reachOf(this.signedIn())));
  }

  get posts(): PostService {
    return this.once('posts', () => new PostService(this.em, this.signedIn(), this.brands));
  }

  get campaigns(): CampaignService {
    return this.once('campaigns', () => new CampaignService(this.em, this.signedIn(), this.brands));
  }

  get events(): ContentEventService {
    return this.once('events', () => new ContentEventService(this.em, reachOf(this.signedIn())));
  }

  get attempts(): PublishAttemptService {
    return this.once('attempts', () => new PublishAttemptService(this.em));
  }

  get apiKeys(): ApiKeyService {
    return this.once('apiKeys', () => new ApiKeyService(this.em));
  }

  get integrations(): IntegrationService {
    return this.once('integrations', () => this.runtime.outreach.integrations(this.em));
  }

  get media(): MediaService {
    return this.once('media', () => this.runtime.outreach.media(this.em));
  }

  get aiImages(): AiImageService {
    return this.once('aiImages', () => this.runtime.outreach.aiImages(this.em));
  }

  get loaders(): SocialLoaders {
    return this.once('loaders', () => createLoaders(this));
  }
}

/** A context on `em`, which must be this request's own fork (`orm.em.fork()`). */
export function createSocialContext(runtime: SocialRuntime, em: EntityManager, principal: Principal | null): SocialContext {
  return new SocialRequestContext(runtime, em, principal);
}

function createLoaders(context: SocialContext): SocialLoaders {
  return {
    brandById: new DataLoader(async (ids) => {
      const found = await context.brands.findMany(ids);
      return ids.map((id) => found.get(id) ?? null);
    }),
    eventsByContent: new DataLoader(async (ids) => {
      const found = await context.events.forContents(ids);
      return ids.map((id) => found.get(id) ?? []);
    }),
    attemptsByPost: new DataLoader(async (ids) => {
      const found = await context.attempts.forPosts(ids);
      return ids.map((id) => found.get(id) ?? []);
    }),
    postsByCampaign: new DataLoader(async (ids) => {
      const found = await context.campaigns.postsOf(ids);
      return ids.map((id) => found.get(id) ?? []);
    }),
  };
}
