import type { PlatformCredentials } from '#lib/config.js';
import {
  authorizationCodeUrl,
  callPlatform,
  isOAuthRefusal,
  PlatformError,
  toTokenSet,
  trimSlash,
  type AuthorizeRequest,
  type PlatformAccount,
  type PlatformAdapter,
  type PlatformHttpOptions,
  type PublishedPost,
  type PublishRequest,
  type TokenSet,
} from './platform.js';

const DEFAULT_INSTANCE = 'https://mastodon.social';
const SCOPES = 'read:accounts write:statuses write:media';

/**
 * Mastodon (any instance: `MASTODON_BASE_URL`). OAuth with PKCE as Mastodon 4.3+ serves it at
 * /oauth/authorize and /oauth/token; statuses through /api/v1/statuses with an Idempotency-Key,
 * images through /api/v2/media.
 */
export class MastodonPlatform implements PlatformAdapter {
  readonly platform = 'mastodon';
  readonly idempotent = true;
  private readonly base: string;

  constructor(
    private readonly credentials: PlatformCredentials,
    private readonly http: PlatformHttpOptions,
  ) {
    this.base = trimSlash(credentials.baseUrl ?? DEFAULT_INSTANCE);
  }

  authorizeUrl(request: AuthorizeRequest): string {
    return authorizationCodeUrl(`${this.base}/oauth/authorize`, this.credentials.clientId, SCOPES, request);
  }

  async exchangeCode(request: { code: string; codeVerifier: string; redirectUri: string }): Promise<TokenSet> {
    return this.token({
      grant_type: 'authorization_code',
      code: request.code,
      code_verifier: request.codeVerifier,
      redirect_uri: request.redirectUri,
      scope: SCOPES,
    });
  }

  async refresh(refreshToken: string): Promise<TokenSet> {
    return this.token({ grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  private async token(fields: Record<string, string>): Promise<TokenSet> {
    const body = new URLSearchParams({
      ...fields,
      client_id: this.credentials.clientId,
      ...(this.credentials.clientSecret ? { client_secret: this.credentials.clientSecret } : {}),
    });
    const answer = await callPlatform<Record<string, unknown>>(
      this.platform,
      `${this.base}/oauth/token`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
      },
      { ...this.http, authFailure: isOAuthRefusal },
    );
    return toTokenSet(this.platform, answer);
  }

  async account(accessToken: string): Promise<PlatformAccount> {
    const answer = await callPlatform<{ id?: string; acct?: string; username?: string; url?: string }>(
      this.platform,
      `${this.base}/api/v1/accounts/verify_credentials`,
      { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } },
      this.http,
    );
    if (!answer?.id) throw new PlatformError('invalid', 'mastodon answered verify_credentials without an account id');
    return { id: String(answer.id), username: String(answer.acct ?? answer.username ?? answer.id), url: answer.url };
  }

  async publish(accessToken: string, _account: PlatformAccount, post: PublishRequest): Promise<PublishedPost> {
    const mediaIds: string[] = [];
    for (const media of post.media) {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(media.bytes)], { type: media.contentType }), media.filename);
      const uploaded = await callPlatform<{ id?: string }>(
        this.platform,
        `${this.base}/api/v2/media`,
        { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' }, body: form },
        this.http,
      );
      if (!uploaded?.id) throw new PlatformError('invalid', 'mastodon answered the media upload without an id');
      mediaIds.push(String(uploaded.id));
    }
    const status = await callPlatform<{ id?: string; url?: string; uri?: string }>(
      this.platform,
      `${this.base}/api/v1/statuses`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${accessToken}`,
          'content-type': 'application/json',
          accept: 'application/json',
          'idempotency-key': post.idempotencyKey,
        },
        body: JSON.stringify({ status: post.text, ...(mediaIds.length ? { media_ids: mediaIds } : {}) }),
      },
      this.http,
    );
    if (!status?.id) throw new PlatformError('invalid', 'mastodon answered the status without an id');
    return { id: String(status.id), url: String(status.url ?? status.uri ?? `${this.base}/statuses/${status.id}`) };
  }
}
