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

const AUTHORIZE_BASE = 'https://x.com';
const API_BASE = 'https://api.x.com';
// offline.access is what makes X send a refresh token; its access tokens live two hours.
const SCOPES = 'tweet.read tweet.write users.read media.write offline.access';

/**
 * X (formerly Twitter) API v2: OAuth 2.0 authorization code with PKCE at /i/oauth2/authorize and
 * /2/oauth2/token (a confidential client authenticates with HTTP Basic), posts through /2/tweets,
 * images through /2/media/upload. `X_BASE_URL` replaces both hosts (a stand-in in tests).
 */
export class XPlatform implements PlatformAdapter {
  readonly platform = 'x';
  /** X's API takes no idempotency key: a call cut off mid-way may or may not have posted. */
  readonly idempotent = false;
  private readonly authorizeBase: string;
  private readonly apiBase: string;

  constructor(
    private readonly credentials: PlatformCredentials,
    private readonly http: PlatformHttpOptions,
  ) {
    this.authorizeBase = trimSlash(credentials.baseUrl ?? AUTHORIZE_BASE);
    this.apiBase = trimSlash(credentials.baseUrl ?? API_BASE);
  }

  authorizeUrl(request: AuthorizeRequest): string {
    return authorizationCodeUrl(`${this.authorizeBase}/i/oauth2/authorize`, this.credentials.clientId, SCOPES, request);
  }

  exchangeCode(request: { code: string; codeVerifier: string; redirectUri: string }): Promise<TokenSet> {
    return this.token({
      grant_type: 'authorization_code',
      code: request.code,
      code_verifier: request.codeVerifier,
      redirect_uri: request.redirectUri,
    });
  }

  refresh(refreshToken: string): Promise<TokenSet> {
    return this.token({ grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  private async token(fields: Record<string, string>): Promise<TokenSet> {
    const { clientId, clientSecret } = this.credentials;
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (clientSecret)
      headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
    const answer = await callPlatform<Record<string, unknown>>(
      this.platform,
      `${this.apiBase}/2/oauth2/token`,
      { method: 'POST', headers, body: new URLSearchParams({ ...fields, client_id: clientId }) },
      { ...this.http, authFailure: isOAuthRefusal },
    );
    return toTokenSet(this.platform, answer);
  }

  async account(accessToken: string): Promise<PlatformAccount> {
    const answer = await callPlatform<{ data?: { id?: string; username?: string } }>(
      this.platform,
      `${this.apiBase}/2/users/me`,
      { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } },
      this.http,
    );
    if (!answer?.data?.id) throw new PlatformError('invalid', 'x answered /2/users/me without a user id');
    const username = String(answer.data.username ?? answer.data.id);
    return { id: String(answer.data.id), username, url: `https://x.com/${username}` };
  }

  async publish(accessToken: string, account: PlatformAccount, post: PublishRequest): Promise<PublishedPost> {
    const mediaIds: string[] = [];
    for (const media of post.media) {
      const form = new FormData();
      form.append('media', new Blob([new Uint8Array(media.bytes)], { type: media.contentType }), media.filename);
      form.append('media_category', 'tweet_image');
      const uploaded = await callPlatform<{ data?: { id?: string } }>(
        this.platform,
        `${this.apiBase}/2/media/upload`,
        { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' }, body: form },
        this.http,
      );
      if (!uploaded?.data?.id) throw new PlatformError('invalid', 'x answered the media upload without an id');
      mediaIds.push(String(uploaded.data.id));
    }
    const answer = await callPlatform<{ data?: { id?: string } }>(
      this.platform,
      `${this.apiBase}/2/tweets`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${accessToken}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify({ text: post.text, ...(mediaIds.length ? { media: { media_ids: mediaIds } } : {}) }),
      },
      // X answers 403 for a duplicate or refused post too; only 401 says the token is no good.
      { ...this.http, authFailure: (status) => status === 401 },
    );
    if (!answer?.data?.id) throw new PlatformError('invalid', 'x answered the post without an id');
    return { id: String(answer.data.id), url: `https://x.com/${account.username}/status/${answer.data.id}` };
  }
}
