import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '#lib/data/database.js';
import { isUuid } from '#lib/ids.js';
import type { Logger } from '#lib/observability/logger.js';
import { publishOutcomes } from '#lib/observability/metrics.js';
import type { ObjectStorage } from '#lib/storage/storage.js';
import { ActorType, ContentEventType } from '../content/content-event.entity.js';
import { ContentEventService } from '../content/content-event.service.js';
import { Integration, IntegrationStatus } from '../integrations/integration.entity.js';
import {
  PlatformTokenService,
  TokenRefreshDeferred,
  type PlatformClients,
} from '../integrations/platform-token.service.js';
import { MediaFile, MediaStatus } from '../media/media.entity.js';
import { PlatformError, type MediaToAttach } from '../integrations/platforms/index.js';
import { Post, PostStatus, snapshotOf } from '../content/post.entity.js';
import { assertCanApply } from '../content/post.state.js';
import type { PublishSchedule } from '../content/publish-schedule.js';
import { PublishAttempt, PublishAttemptStatus } from './publish-attempt.entity.js';
import type { PublishJob } from './publish-queue.js';

const PUBLISHER = { type: ActorType.SYSTEM, id: 'publisher' };

/** What publishing a post takes besides its database: the platforms, their tokens' cipher, the media bytes. */
export interface PublisherTools extends PlatformClients {
  storage: ObjectStorage;
}

/** The job should run again later: nothing was attempted, nothing changed for good. */
export class PublishDeferred extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PublishDeferred';
  }
}

/** What one call to a platform came to. */
interface CallOutcome {
  platformPostId?: string;
  url?: string;
  error?: string;
  /** The call was cut off: it may have been posted. */
  outcomeUnknown?: boolean;
}

const UNKNOWN_OUTCOME =
  'the outcome is unknown, so it is not posted again automatically (retry with force: true to post anyway; it may post twice)';

interface PlannedCall {
  attempt: PublishAttempt;
  integration: Integration | null;
  accessToken: string | null;
  problem: string | null;
}

/**
 * Publishes one due post, at most once per platform. The order is what makes it safe:
 * 1. tokens are made usable first (a platform that cannot be reached for a renewal defers the
 *    whole job, before anything is recorded);
 * 2. one transaction locks the post, checks it is still queued for this very time, moves it to
 *    `publishing` and records a `pending` attempt per platform (a unique index refuses a second
 *    pending or succeeded attempt for the same post and platform, whoever tries);
 * 3. each platform is called once; its outcome (success, the platform's error, or a timeout,
 *    whose outcome is unknown and which therefore ends `failed` rather than posting again) is
 *    written with its audit event, and the last one settles the post, in the same transaction.
 * A job that finds its post `publishing` is a rerun after a crash mid-call: attempts still
 * pending are made again where the platform takes an idempotency key, and otherwise end `failed`
 * with their outcome unknown, never called again unless a retry says `force`.
 */
export class PublisherService {
  constructor(
    private readonly em: EntityManager,
    private readonly tools: PublisherTools,
    private readonly schedule: PublishSchedule,
    private readonly logger: Logger,
  ) {}

  /**
   * `lastChance`: the queue will not run this job again, so a token that cannot be renewed now
   * fails the platform's attempt (without calling it) instead of deferring once more.
   */
  async run(job: PublishJob, options: { lastChance?: boolean } = {}): Promise<'published' | 'failed' | 'skipped'> {
    const tokens = new PlatformTokenService(this.em, this.tools, this.logger);
    const post = await this.em.findOne(Post, { id: job.postId });
    if (!post) return 'skipped';
    if (post.status === PostStatus.PUBLISHING) return this.recoverInterrupted(post, tokens);
    if (!this.isDue(post, job)) return 'skipped';

    // 1. Usable tokens before anything is recorded.
    const usable = new Map<
      string,
      { integration: Integration | null; accessToken: string | null; problem: string | null }
    >();
    for (const platform of post.platforms) {
      const integration = await tokens.find(post.ownerId, platform);
      if (!integration) {
        usable.set(platform, { integration: null, accessToken: null, problem: `no ${platform} account is connected` });
        continue;
      }
      try {
        usable.set(platform, { integration, accessToken: await tokens.accessToken(integration), problem: null });
      } catch (error) {
        if (error instanceof TokenRefreshDeferred) {
          if (!options.lastChance)
            throw new PublishDeferred(`the ${platform} token could not be renewed yet: ${error.reason}`);
          usable.set(platform, {
            integration,
            accessToken: null,
            problem: `the ${platform} token could not be renewed: ${error.reason}`,
          });
          continue;
        }
        if (error instanceof PlatformError) {
          usable.set(platform, {
            integration,
            accessToken: null,
            problem: `the ${platform} account needs to be reconnected (${error.message})`,
          });
          continue;
        }
        throw error;
      }
    }

    // 2. Claim: the post leaves the queue and each platform gets its one attempt.
    const claimed = await this.em
      .transactional(async (tx) => {
        const locked = await tx.findOne(
          Post,
          { id: job.postId },
          { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
        );
        if (!locked || !this.isDue(locked, job)) return null;
        const before = snapshotOf(locked);
        assertCanApply('startPublishing', locked);
        locked.status = PostStatus.PUBLISHING;
        locked.updatedAt = new Date();
        const earlier = await tx.find(PublishAttempt, { postId: locked.id, status: PublishAttemptStatus.SUCCEEDED });
        const done = new Set(earlier.map((attempt) => attempt.platform));
        const calls: PlannedCall[] = [];
        for (const platform of locked.platforms) {
          if (done.has(platform)) continue;
          const attempt = new PublishAttempt();
          attempt.postId = locked.id;
          attempt.platform = platform;
          tx.persist(attempt);
          const planned = usable.get(platform) ?? {
            integration: null,
            accessToken: null,
            problem: `no ${platform} account is connected`,
          };
          calls.push({ attempt, ...planned });
        }
        ContentEventService.record(tx, { post: locked, type: ContentEventType.PUBLISHING, actor: PUBLISHER, before });
        await this.schedule.follow(tx, locked);
        return { post: locked, calls };
      })
      .catch((error) => {
        // Another worker recorded an attempt for this post first; it owns the publish.
        if (error instanceof UniqueConstraintViolationException) return null;
        throw error;
      });
    if (!claimed) return 'skipped';

    // 3. One call per platform, each outcome written as it is known.
    if (!claimed.calls.length) return this.settle(claimed.post, null, true);
    const media = claimed.calls.some((call) => call.accessToken) ? await this.mediaOf(claimed.post) : [];
    let result: 'published' | 'failed' = 'failed';
    for (const [index, call] of claimed.calls.entries()) {
      const outcome = await this.call(claimed.post, call, media);
      publishOutcomes.inc({
        platform: this.tools.platforms.get(call.attempt.platform) ? call.attempt.platform : 'unconfigured',
        outcome: outcome.error ? 'failed' : 'succeeded',
      });
      result = await this.settle(
        claimed.post,
        { attempt: call.attempt, ...outcome },
        index === claimed.calls.length - 1,
      );
    }
    return result;
  }

  private isDue(post: Post, job: PublishJob): boolean {
    return (
      post.status === PostStatus.QUEUED &&
      post.scheduledAt !== null &&
      post.scheduledAt.toISOString() === job.scheduledAt
    );
  }

  private async call(post: Post, call: PlannedCall, media: MediaToAttach[]): Promise<CallOutcome> {
    if (!call.accessToken || !call.integration) return { error: call.problem ?? 'the account is not connected' };
    const adapter = this.tools.platforms.get(call.attempt.platform);
    if (!adapter) return { error: `${call.attempt.platform} is not configured on this service` };
    try {
      const published = await adapter.publish(
        call.accessToken,
        { id: call.integration.accountId, username: call.integration.accountName },
        { text: post.content, idempotencyKey: call.attempt.id, media },
      );
      return { platformPostId: published.id, url: published.url };
    } catch (error) {
      if (!(error instanceof PlatformError)) {
        this.logger.error(
          { err: error, postId: post.id, platform: call.attempt.platform },
          'publish call failed unexpectedly',
        );
        return { error: 'the publish call failed unexpectedly; it is not retried automatically' };
      }
      if (error.kind === 'rejected') await this.markNeedsReconnect(call.integration, error.message);
      if (error.kind === 'timeout') return { error: `${error.message}; ${UNKNOWN_OUTCOME}`, outcomeUnknown: true };
      return { error: error.message };
    }
  }

  private async markNeedsReconnect(integration: Integration, reason: string): Promise<void> {
    await this.em.nativeUpdate(
      Integration,
      { id: integration.id },
      { status: IntegrationStatus.NEEDS_RECONNECT, lastError: reason, updatedAt: new Date() },
    );
  }

  /**
   * Writes one attempt's outcome with its audit event; the last one also moves the post to
   * `published` (every platform done) or `failed`, in the same transaction.
   */
  private async settle(
    post: Post,
    outcome: ({ attempt: PublishAttempt } & CallOutcome) | null,
    last: boolean,
  ): Promise<'published' | 'failed'> {
    return this.em.transactional(async (tx) => {
      const locked = await tx.findOneOrFail(
        Post,
        { id: post.id },
        { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
      );
      const before = snapshotOf(locked);
      if (outcome) {
        const attempt = await tx.findOneOrFail(PublishAttempt, { id: outcome.attempt.id });
        attempt.finishedAt = new Date();
        attempt.status = outcome.error ? PublishAttemptStatus.FAILED : PublishAttemptStatus.SUCCEEDED;
        attempt.platformPostId = outcome.platformPostId ?? null;
        attempt.url = outcome.url ?? null;
        attempt.error = outcome.error ?? null;
        attempt.outcomeUnknown = Boolean(outcome.error && outcome.outcomeUnknown);
      }
      let status: 'published' | 'failed' = outcome?.error ? 'failed' : 'published';
      if (last) {
        await tx.flush();
        const attempts = await tx.find(
          PublishAttempt,
          { postId: post.id },
          { orderBy: { attemptedAt: 'asc', id: 'asc' } },
        );
        const succeeded = new Set(
          attempts.filter((a) => a.status === PublishAttemptStatus.SUCCEEDED).map((a) => a.platform),
        );
        const allDone = locked.platforms.length > 0 && locked.platforms.every((platform) => succeeded.has(platform));
        status = allDone ? 'published' : 'failed';
        assertCanApply('finishPublishing', locked);
        locked.status = allDone ? PostStatus.PUBLISHED : PostStatus.FAILED;
        if (allDone) locked.publishedAt = new Date();
        locked.updatedAt = new Date();
      }
      ContentEventService.record(tx, {
        post: locked,
        type: (outcome ? outcome.error : status === 'failed')
          ? ContentEventType.PUBLISH_FAILED
          : ContentEventType.PUBLISHED,
        actor: PUBLISHER,
        before,
        after: {
          ...snapshotOf(locked),
          ...(outcome
            ? {
                platform: outcome.attempt.platform,
                platformPostId: outcome.platformPostId ?? null,
                url: outcome.url ?? null,
                error: outcome.error ?? null,
              }
            : { error: status === 'failed' ? 'the post names no platform to publish to' : null }),
        },
      });
      if (last) await this.schedule.follow(tx, locked);
      return status;
    });
  }

  /**
   * A rerun after the worker stopped mid-publish. A call in flight to a platform with an
   * idempotency key (Mastodon) is simply made again with the same key, derived from the attempt:
   * the platform posts it once, however many times it was sent. Elsewhere (X) it may or may not
   * have gone out: the attempt ends failed with the outcome unknown, and only a forced retry
   * posts again.
   */
  private async recoverInterrupted(post: Post, tokens: PlatformTokenService): Promise<'published' | 'failed'> {
    const pending = await this.em.find(
      PublishAttempt,
      { postId: post.id, status: PublishAttemptStatus.PENDING },
      { orderBy: { attemptedAt: 'asc' } },
    );
    let result: 'published' | 'failed' = 'failed';
    if (!pending.length) return this.settle(post, null, true);
    let media: MediaToAttach[] | undefined;
    for (const [index, attempt] of pending.entries()) {
      let outcome: CallOutcome = {
        error: `the publisher stopped during the call to ${attempt.platform}, which takes no idempotency key; ${UNKNOWN_OUTCOME}`,
        outcomeUnknown: true,
      };
      if (this.tools.platforms.get(attempt.platform)?.idempotent) {
        const integration = await tokens.find(post.ownerId, attempt.platform);
        const accessToken = integration ? await tokens.accessToken(integration).catch(() => null) : null;
        media ??= await this.mediaOf(post);
        this.logger.info(
          { postId: post.id, platform: attempt.platform, attemptId: attempt.id },
          'repeating an interrupted publish with its idempotency key',
        );
        outcome = await this.call(
          post,
          { attempt, integration, accessToken, problem: `the ${attempt.platform} account cannot be used now` },
          media,
        );
      }
      result = await this.settle(post, { attempt, ...outcome }, index === pending.length - 1);
    }
    return result;
  }

  private async mediaOf(post: Post): Promise<MediaToAttach[]> {
    const ids = post.mediaIds.filter(isUuid);
    if (!ids.length) return [];
    const files = await this.em.find(MediaFile, { id: { $in: ids }, ownerId: post.ownerId, status: MediaStatus.READY });
    const attached: MediaToAttach[] = [];
    for (const file of files) {
      const { stream } = await this.tools.storage.open(file.storageKey);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      attached.push({ bytes: Buffer.concat(chunks), contentType: file.contentType, filename: file.filename });
    }
    return attached;
  }
}
