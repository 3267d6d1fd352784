import { createHash } from 'node:crypto';
import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import type { Logger } from '#lib/observability/logger.js';
import { randomToken, sha256Hex } from '#lib/secrets.js';
import type { Reach } from '../access/reach.js';
import type { Platform } from '../social.platforms.js';
import { Integration, IntegrationStatus } from './integration.entity.js';
import { PendingConnect } from './pending-connect.entity.js';
import { PlatformTokenService, type PlatformClients } from './platform-token.service.js';
import { PlatformError, type PlatformAdapter, type TokenSet } from './platforms/index.js';

/** A connect left unfinished this long is refused; the user simply starts again. */
export const OAUTH_STATE_TTL_SECONDS = 600;

export interface IntegrationSettings extends PlatformClients {
  /** Public base address of the social REST service; the OAuth callback lives under it. */
  publicUrl: string;
  /** The web app (no trailing slash), where the browser goes back to once a connect ends. */
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

/**
 * The caller's platform accounts: listing them and connecting one over OAuth. An account serves
 * every brand of its owner, so an API key limited to some brands may list the accounts but not
 * connect one in their place.
 */
export class IntegrationService {
  constructor(
    private readonly em: EntityManager,
    private readonly reach: Reach,
    private readonly settings: IntegrationSettings,
  ) {}

  available(): Platform[] {
    return this.settings.platforms.configured();
  }

  list(): Promise<Integration[]> {
    return this.em.find(Integration, { ownerId: this.reach.ownerId }, { orderBy: { platform: 'asc' } });
  }

  private adapterOf(platform: Platform): PlatformAdapter {
    const adapter = this.settings.platforms.get(platform);
    if (!adapter) throw new AppError(ErrorCode.NOT_FOUND, `Platform ${platform} is not available`);
    return adapter;
  }

  callbackUrlOf(platform: Platform): string {
    return `${this.settings.publicUrl}/api/integrations/${encodeURIComponent(platform)}/callback`;
  }

  /**
   * Starts the authorization-code flow with PKCE: a single-use state bound to the caller and to the
   * caller's browser (`browserBinding`, the hash of a nonce only that browser holds), kept here.
   */
  async startConnect(platform: Platform, browserBinding: string): Promise<ConnectStart> {
    const ownerId = this.reach.ownerId;
    if (!/^[0-9a-f]{64}$/.test(String(browserBinding)))
      throw AppError.badInput('browserBinding', 'must be the SHA-256 (hex) of a nonce the browser keeps');
    if (!this.reach.everyBrand) {
      throw new AppError(
        ErrorCode.FORBIDDEN,
        'A platform account serves every brand of its owner; this API key reaches only some of them',
      );
    }
    const adapter = this.adapterOf(platform);
    const state = randomToken(32);
    const codeVerifier = randomToken(48);
    const codeChallenge = createHash('sha256').update(codeVerifier).digest('base64url');
    const stateHash = sha256Hex(state);
    const pending = new PendingConnect();
    pending.stateHash = stateHash;
    pending.ownerId = ownerId;
    pending.platform = platform;
    // The binding is sealed in with the verifier: only the browser's nonce opens it again.
    pending.codeVerifierSealed = this.settings.cipher.seal(codeVerifier, verifierContext(stateHash, browserBinding));
    pending.redirectUri = this.callbackUrlOf(platform);
    pending.expiresAt = new Date(Date.now() + OAUTH_STATE_TTL_SECONDS * 1000);
    // Abandoned connects of long ago are of no use to anyone; sweep them as new ones arrive.
    await this.em.nativeDelete(PendingConnect, { expiresAt: { $lt: new Date(Date.now() - 86_400_000) } });
    await this.em.persist(pending).flush();
    return {
      authorizeUrl: adapter.authorizeUrl({ state, codeChallenge, redirectUri: pending.redirectUri }),
      expiresAt: pending.expiresAt,
    };
  }

  /**
   * The platform's redirect back: checks the state and its browser binding, then claims the state
   * (once, atomically), exchanges the code with the PKCE verifier, stores the tokens sealed, and
   * tells where to send the browser. A state that is forged, expired or used, or that comes from
   * another browser, is refused before anything else happens; the binding is checked before the
   * claim, so whoever sees a state cannot use it up with a callback of their own. The redirect
   * carries no credential: the state is bound to the user who started the connect, and names the owner.
   */
  async completeConnect(
    platform: Platform,
    input: { state?: string | null; code?: string | null; error?: string | null; browserNonce?: string | null },
  ): Promise<ConnectOutcome> {
    const adapter = this.adapterOf(platform);
    const state = input.state?.trim();
    if (!state) throw AppError.badInput('state', 'is required');
    if (state.length > 512) throw AppError.badInput('state', 'is not a state this service issued');
    if (!input.error && !input.code?.trim()) throw AppError.badInput('code', 'is required');

    const stateHash = sha256Hex(state);
    const now = new Date();
    const pending = await this.em.findOne(PendingConnect, { stateHash, platform });
    if (!pending) throw AppError.badInput('state', 'is not a state this service issued for this platform');
    if (pending.usedAt) throw AppError.badInput('state', 'has already been used');
    if (pending.expiresAt <= now) throw AppError.badInput('state', 'has expired; start connecting again');

    // The platform's `error=` answer ends the connect too, so it needs the starting browser as much.
    let codeVerifier: string;
    try {
      codeVerifier = this.settings.cipher.open(
        pending.codeVerifierSealed,
        verifierContext(stateHash, sha256Hex(input.browserNonce ?? '')),
      );
    } catch {
      // AES-GCM cannot tell a verifier sealed for another browser from one sealed under a key no longer
      // in ENCRYPTION_KEY; the remedy is the same (connect again), and the log names the connect for either.
      this.settings.logger.warn(
        { platform, pendingConnectId: pending.id, ownerId: pending.ownerId },
        'the OAuth verifier of a pending connect did not open: a callback from another browser, ' +
          'or a connect started under a key no longer in ENCRYPTION_KEY; it must be started again',
      );
      throw AppError.badInput('state', 'was issued to another browser; start connecting again in this one');
    }

    const claimed = await this.em.nativeUpdate(
      PendingConnect,
      { stateHash, platform, usedAt: null, expiresAt: { $gt: now } },
      { usedAt: now },
    );
    // Checked open above with the same `now`: only another callback of this browser can have claimed it since.
    if (!claimed) throw AppError.badInput('state', 'has already been used');

    if (input.error)
      return { integration: null, redirectUrl: this.webRedirect(platform, 'error', input.error.slice(0, 100)) };

    let tokens: TokenSet;
    let account;
    try {
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
    integration.status = IntegrationStatus.CONNECTED;
    integration.connectedAt = new Date();
    integration.lastError = null;
    new PlatformTokenService(this.em, this.settings).store(integration, tokens, null);
    await this.em.flush();
    return { integration, redirectUrl: this.webRedirect(platform, 'connected') };
  }

  private webRedirect(platform: Platform, status: string, error?: string): string {
    const url = new URL(`${this.settings.webUrl}/integrations`);
    url.searchParams.set('platform', platform);
    url.searchParams.set('status', status);
    if (error) url.searchParams.set('error', error);
    return url.toString();
  }
}

/** What the PKCE verifier is sealed to: the state, and the hash of the starting browser's nonce. */
function verifierContext(stateHash: string, browserBinding: string): string {
  return `oauth-state:${stateHash}:browser:${browserBinding}`;
}
