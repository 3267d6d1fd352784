import type { EntityManager } from '#lib/data/database.js';
import type { Logger } from '#lib/observability/logger.js';
import type { Platform } from '../social.platforms.js';
import { Integration, IntegrationStatus } from './integration.entity.js';
import { PlatformError, type Platforms, type TokenSet } from './platforms/index.js';
import { UnopenableSealedValue, type TokenCipher } from './token-cipher.js';

/** Access tokens are renewed this long before they expire, so a publish never meets an expired one. */
export const REFRESH_MARGIN_SECONDS = 300;

/** What talking to a platform for a user takes: the adapters on offer and the cipher of their tokens at rest. */
export interface PlatformClients {
  platforms: Platforms;
  cipher: TokenCipher;
}

/** Thrown when a platform could not be reached for a token renewal; nothing was changed for good. */
export class TokenRefreshDeferred extends Error {
  constructor(
    readonly integrationId: string,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'TokenRefreshDeferred';
  }
}

/**
 * The platform tokens of connected accounts, for the platform's own workers (the publisher and the
 * renewal job), not for a caller: stored sealed, handed out usable, renewed before they expire.
 */
export class PlatformTokenService {
  constructor(
    private readonly em: EntityManager,
    private readonly clients: PlatformClients,
    /** Where a token that no key opens is reported (the workers' log). */
    private readonly logger?: Logger,
  ) {}

  /** The user's integration for a platform, or null. */
  find(ownerId: string, platform: Platform): Promise<Integration | null> {
    return this.em.findOne(Integration, { ownerId, platform });
  }

  /** Seals and keeps a fresh token set on the integration (flushed by the caller). */
  store(integration: Integration, tokens: TokenSet, previousRefreshToken: string | null): void {
    const { cipher } = this.clients;
    integration.accessTokenSealed = cipher.seal(tokens.accessToken, `integration:${integration.id}:access`);
    // A platform that does not send a new refresh token expects the old one to be used again.
    const refreshToken = tokens.refreshToken ?? previousRefreshToken;
    integration.refreshTokenSealed = refreshToken
      ? cipher.seal(refreshToken, `integration:${integration.id}:refresh`)
      : null;
    integration.tokenExpiresAt = tokens.expiresAt ?? null;
    integration.scope = tokens.scope ?? integration.scope;
    integration.updatedAt = new Date();
  }

  private refreshTokenOf(integration: Integration): Promise<string | null> {
    const sealed = integration.refreshTokenSealed;
    return this.opened(integration, () =>
      sealed
        ? this.clients.cipher.open(sealed, `integration:${integration.id}:refresh`, `integration ${integration.id}`)
        : null,
    );
  }

  private accessTokenOf(integration: Integration): Promise<string> {
    return this.opened(integration, () =>
      this.clients.cipher.open(
        integration.accessTokenSealed,
        `integration:${integration.id}:access`,
        `integration ${integration.id}`,
      ),
    );
  }

  /**
   * A token opened, or, when no key of ENCRYPTION_KEY opens it (sealed under a key since dropped), an
   * error line naming the integration, the integration marked `needs_reconnect` with the reason, and
   * the refusal a platform's own would be: the post fails saying so instead of its job failing for ever.
   */
  private async opened<T>(integration: Integration, open: () => T): Promise<T> {
    try {
      return open();
    } catch (error) {
      if (!(error instanceof UnopenableSealedValue)) throw error;
      this.logger?.error(
        { integrationId: integration.id, platform: integration.platform, reason: error.message },
        'a platform token opens with no key: the integration needs reconnecting',
      );
      await this.markNeedsReconnect(integration, error.message);
      throw new PlatformError('rejected', error.message);
    }
  }

  /**
   * A usable access token, renewed first when it expires within the margin. Throws
   * `TokenRefreshDeferred` when the platform could not be reached and the old token is no longer
   * good enough, and PlatformError `rejected` when the account must be reconnected.
   */
  async accessToken(integration: Integration): Promise<string> {
    if (integration.status !== IntegrationStatus.CONNECTED) {
      throw new PlatformError('rejected', `the ${integration.platform} account needs to be reconnected`);
    }
    if (this.isDue(integration)) {
      try {
        await this.refresh(integration);
      } catch (error) {
        // Still valid for a while: use it now and renew on a later run.
        if (
          error instanceof TokenRefreshDeferred &&
          integration.tokenExpiresAt &&
          integration.tokenExpiresAt.getTime() > Date.now() + 30_000
        ) {
          return await this.accessTokenOf(integration);
        }
        throw error;
      }
    }
    return await this.accessTokenOf(integration);
  }

  private isDue(integration: Integration): boolean {
    return (
      integration.tokenExpiresAt !== null &&
      integration.tokenExpiresAt.getTime() <= Date.now() + REFRESH_MARGIN_SECONDS * 1000
    );
  }

  /**
   * Renews the access token. A definite refusal marks the integration `needs_reconnect`; a network
   * problem, 5xx or 429 leaves it connected (with the reason noted) and throws TokenRefreshDeferred.
   */
  async refresh(integration: Integration): Promise<void> {
    const adapter = this.clients.platforms.get(integration.platform);
    const refreshToken = await this.refreshTokenOf(integration);
    if (!adapter || !refreshToken) {
      if (integration.tokenExpiresAt && integration.tokenExpiresAt.getTime() <= Date.now()) {
        await this.markNeedsReconnect(
          integration,
          adapter
            ? 'the access token expired and the platform gave no refresh token'
            : 'the platform is no longer configured',
        );
      }
      return;
    }
    const sealedBefore = integration.refreshTokenSealed;
    try {
      const tokens = await adapter.refresh(refreshToken);
      this.store(integration, tokens, refreshToken);
      integration.lastRefreshedAt = new Date();
      integration.lastError = null;
      await this.em.flush();
    } catch (error) {
      if (!(error instanceof PlatformError)) throw error;
      if (error.kind === 'rejected') {
        // Another worker may have renewed it a moment ago (platforms rotate refresh tokens): then
        // the refusal was of the old token, and the account is fine.
        await this.em.refresh(integration);
        if (integration.refreshTokenSealed !== sealedBefore) return;
        await this.markNeedsReconnect(integration, error.message);
        throw error;
      }
      integration.lastError = `token renewal will be retried: ${error.message}`;
      integration.updatedAt = new Date();
      await this.em.flush();
      throw new TokenRefreshDeferred(integration.id, error.message);
    }
  }

  private async markNeedsReconnect(integration: Integration, reason: string): Promise<void> {
    integration.status = IntegrationStatus.NEEDS_RECONNECT;
    integration.lastError = reason;
    integration.updatedAt = new Date();
    await this.em.flush();
  }

  /** Renews every connected token that expires within the margin (the worker runs this each minute). */
  async refreshDue(): Promise<{ refreshed: number; deferred: number; rejected: number }> {
    const due = await this.em.find(Integration, {
      status: IntegrationStatus.CONNECTED,
      refreshTokenSealed: { $ne: null },
      tokenExpiresAt: { $lte: new Date(Date.now() + REFRESH_MARGIN_SECONDS * 1000) },
    });
    const outcome = { refreshed: 0, deferred: 0, rejected: 0 };
    for (const integration of due) {
      try {
        await this.refresh(integration);
        outcome.refreshed += 1;
      } catch (error) {
        if (error instanceof TokenRefreshDeferred) outcome.deferred += 1;
        else if (error instanceof PlatformError) outcome.rejected += 1;
        else throw error;
      }
    }
    return outcome;
  }
}
