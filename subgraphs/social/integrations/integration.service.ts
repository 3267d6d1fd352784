import { createHash } from 'node:crypto';
import type { EntityManager } from '../../../lib/database.js';
import { AppError, ErrorCode } from '../../../lib/errors.js';
import type { Logger } from '../../../lib/logger.js';
import { randomToken, sha256Hex } from '../../../lib/secrets.js';
import { OAuthState } from './pending-connect.entity.js';
import { Integration, IntegrationStatus } from './integration.entity.js';
import type { TokenCipher } from './token-cipher.js';
import { PlatformError, trimSlash, type PlatformAdapter, type TokenSet } from './platforms/index.js';
import type { Platforms } from './platforms/index.js';

/** A connect left unfinished this long is refused; the user simply starts again. */
export const OAUTH_STATE_TTL_SECONDS = 600;
/** Access tokens are renewed this long before they expire, so a publish never meets an expired one. */
export const REFRESH_MARGIN_SECONDS = 300;

export interface IntegrationSettings {
  platforms: Platforms;
  cipher: TokenCipher;
  /** Public base address of the social REST service; the OAuth callback lives under it. */
  publicBaseUrl: string;
  webUrl: string;
  logger: Logger;
}

export interface ConnectStart {
  authorizeUrl: string;
  expiresAt: Date;
}

export interface ConnectOutcome {
  integration: Integration | null;
  /** Where the browser goes next: the web app, told how the connect ended. */
  redirectUrl: string;
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

/** The rules of platform integrations: connecting over OAuth, listing, and keeping tokens fresh. */
export class IntegrationService {
  constructor(
    private readonly em: EntityManager,
    private readonly settings: IntegrationSettings,
  ) {}

  available(): string[] {
    return this.settings.platforms.configured();
  }

  list(ownerId: string): Promise<Integration[]> {
    return this.em.find(Integration, { ownerId }, { orderBy: { platform: 'asc' } });
  }

  private adapterOf(platform: string): PlatformAdapter {
    const adapter = typeof platform === 'string' ? this.settings.platforms.get(platform) : undefined;
    if (!adapter) throw new AppError(ErrorCode.NOT_FOUND, `Platform ${String(platform).slice(0, 40)} is not available`);
    return adapter;
  }

  callbackUrlOf(platform: string): string {
    return `${trimSlash(this.settings.publicBaseUrl)}/api/integrations/${encodeURIComponent(platform)}/callback`;
  }

  /** Starts the authorization-code flow with PKCE: a single-use state bound to the user, kept here. */
  async startConnect(ownerId: string, platform: string): Promise<ConnectStart> {
    const adapter = this.adapterOf(platform);
    const state = randomToken(32);
    const codeVerifier = randomToken(48);
    const codeChallenge = createHash('sha256').update(codeVerifier).digest('base64url');
    const stateHash = sha256Hex(state);
    const pending = new OAuthState();
    pending.stateHash = stateHash;
    pending.ownerId = ownerId;
    pending.platform = platform;
    pending.codeVerifierSealed = this.settings.cipher.seal(codeVerifier, `oauth-state:${stateHash}`);
    pending.redirectUri = this.callbackUrlOf(platform);
    pending.expiresAt = new Date(Date.now() + OAUTH_STATE_TTL_SECONDS * 1000);
    // Abandoned connects of long ago are of no use to anyone; sweep them as new ones arrive.
    await this.em.nativeDelete(OAuthState, { expiresAt: { $lt: new Date(Date.now() - 86_400_000) } });
    await this.em.persist(pending).flush();
    return {
      authorizeUrl: adapter.authorizeUrl({ state, codeChallenge, redirectUri: pending.redirectUri }),
      expiresAt: pending.expiresAt,
    };
  }

  /**
   * The platform's redirect back: claims the state (once, atomically), exchanges the code with
   * the PKCE verifier, stores the tokens sealed, and tells where to send the browser. A state
   * that is forged, expired or used is refused before anything else happens.
   */
  async completeConnect(platform: string, input: { state?: string | null; code?: string | null; error?: string | null }): Promise<ConnectOutcome> {
    const adapter = this.adapterOf(platform);
    const state = input.state?.trim();
    if (!state) throw AppError.badInput('state', 'is required');
    if (state.length > 512) throw AppError.badInput('state', 'is not a state this service issued');
    if (!input.error && !input.code?.trim()) throw AppError.badInput('code', 'is required');

    const stateHash = sha256Hex(state);
    const now = new Date();
    const claimed = await this.em.nativeUpdate(
      OAuthState,
      { stateHash, platform, usedAt: null, expiresAt: { $gt: now } },
      { usedAt: now },
    );
    const pending = await this.em.findOne(OAuthState, { stateHash, platform });
    if (!claimed || !pending) {
      if (!pending) throw AppError.badInput('state', 'is not a state this service issued for this platform');
      if (pending.usedAt) throw AppError.badInput('state', 'has already been used');
      throw AppError.badInput('state', 'has expired; start connecting again');
    }

    if (input.error) return { integration: null, redirectUrl: this.webRedirect(platform, 'error', input.error.slice(0, 100)) };

    let tokens: TokenSet;
    let account;
    try {
      const codeVerifier = this.settings.cipher.open(pending.codeVerifierSealed, `oauth-state:${stateHash}`);
      tokens = await adapter.exchangeCode({ code: input.code!.trim(), codeVerifier, redirectUri: pending.redirectUri });
      account = await adapter.account(tokens.accessToken);
    } catch (error) {
      if (!(error instanceof PlatformError)) throw error;
      this.settings.logger.warn({ platform, reason: error.message }, 'OAuth code exchange failed');
      return { integration: null, redirectUrl: this.webRedirect(platform, 'error', 'exchange_failed') };
    }

    let integration = await this.em.findOne(Integration, { ownerId: pending.ownerId, platform });
    if (!integration) {
      integration = new Integration();
      integration.ownerId = pending.ownerId;
      integration.platform = platform;
      this.em.persist(integration);
    }
    integration.accountId = account.id;
    integration.accountName = account.username;
    integration.accountUrl = account.url ?? null;
    integration.status = IntegrationStatus.connected;
    integration.connectedAt = new Date();
    integration.lastError = null;
    this.storeTokens(integration, tokens, null);
    await this.em.flush();
    return { integration, redirectUrl: this.webRedirect(platform, 'connected') };
  }

  private webRedirect(platform: string, status: string, error?: string): string {
    const url = new URL(`${trimSlash(this.settings.webUrl)}/integrations`);
    url.searchParams.set('platform', platform);
    url.searchParams.set('status', status);
    if (error) url.searchParams.set('error', error);
    return url.toString();
  }

  private storeTokens(integration: Integration, tokens: TokenSet, previousRefreshToken: string | null): void {
    const { cipher } = this.settings;
    integration.accessTokenSealed = cipher.seal(tokens.accessToken, `integration:${integration.id}:access`);
    // A platform that does not send a new refresh token expects the old one to be used again.
    const refreshToken = tokens.refreshToken ?? previousRefreshToken;
    integration.refreshTokenSealed = refreshToken ? cipher.seal(refreshToken, `integration:${integration.id}:refresh`) : null;
    integration.tokenExpiresAt = tokens.expiresAt ?? null;
    integration.scope = tokens.scope ?? integration.scope;
    integration.updatedAt = new Date();
  }

  private refreshTokenOf(integration: Integration): string | null {
    return integration.refreshTokenSealed
      ? this.settings.cipher.open(integration.refreshTokenSealed, `integration:${integration.id}:refresh`)
      : null;
  }

  private accessTokenOf(integration: Integration): string {
    return this.settings.cipher.open(integration.accessTokenSealed, `integration:${integration.id}:access`);
  }

  /** The user's integration for a platform, or null. */
  find(ownerId: string, platform: string): Promise<Integration | null> {
    return this.em.findOne(Integration, { ownerId, platform });
  }

  /**
   * A usable access token, renewed first when it expires within the margin. Throws
   * `TokenRefreshDeferred` when the platform could not be reached and the old token is no longer
   * good enough, and PlatformError `rejected` when the account must be reconnected.
   */
  async accessToken(integration: Integration): Promise<string> {
    if (integration.status !== IntegrationStatus.connected) {
      throw new PlatformError('rejected', `the ${integration.platform} account needs to be reconnected`);
    }
    if (this.isDue(integration)) {
      try {
        await this.refresh(integration);
      } catch (error) {
        // Still valid for a while: use it now and renew on a later run.
        if (error instanceof TokenRefreshDeferred && integration.tokenExpiresAt && integration.tokenExpiresAt.getTime() > Date.now() + 30_000) {
          return this.accessTokenOf(integration);
        }
        throw error;
      }
    }
    return this.accessTokenOf(integration);
  }

  private isDue(integration: Integration): boolean {
    return integration.tokenExpiresAt !== null && integration.tokenExpiresAt.getTime() <= Date.now() + REFRESH_MARGIN_SECONDS * 1000;
  }

  /**
   * Renews the access token. A definite refusal marks the integration `needs_reconnect`; a network
   * problem, 5xx or 429 leaves it connected (with the reason noted) and throws TokenRefreshDeferred.
   */
  async refresh(integration: Integration): Promise<void> {
    const adapter = this.settings.platforms.get(integration.platform);
    const refreshToken = this.refreshTokenOf(integration);
    if (!adapter || !refreshToken) {
      if (integration.tokenExpiresAt && integration.tokenExpiresAt.getTime() <= Date.now()) {
        await this.markNeedsReconnect(integration, adapter ? 'the access token expired and the platform gave no refresh token' : 'the platform is no longer configured');
      }
      return;
    }
    const sealedBefore = integration.refreshTokenSealed;
    try {
      const tokens = await adapter.refresh(refreshToken);
      this.storeTokens(integration, tokens, refreshToken);
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
    integration.status = IntegrationStatus.needs_reconnect;
    integration.lastError = reason;
    integration.updatedAt = new Date();
    await this.em.flush();
  }

  /** Renews every connected token that expires within the margin (the worker runs this each minute). */
  async refreshDue(): Promise<{ refreshed: number; deferred: number; rejected: number }> {
    const due = await this.em.find(Integration, {
      status: IntegrationStatus.connected,
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
