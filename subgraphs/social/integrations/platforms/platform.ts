/**
 * One interface for every social platform the publisher reaches: the OAuth 2.0 authorization-code
 * flow with PKCE (authorize URL, code exchange, refresh), who the account is, and publishing.
 * Each adapter speaks its platform's real API shape; base URLs come from config so a self-hosted
 * instance (or a stand-in in tests) works the same way.
 */
export interface TokenSet {
  accessToken: string;
  /** Absent when the platform did not send one (a refresh then keeps the stored one). */
  refreshToken?: string;
  /** Absent when the token does not expire (Mastodon). */
  expiresAt?: Date;
  scope?: string;
}

export interface PlatformAccount {
  id: string;
  username: string;
  url?: string;
}

export interface MediaToAttach {
  bytes: Buffer;
  contentType: string;
  filename: string;
}

export interface PublishRequest {
  text: string;
  /** Sent where the platform honours it, so a retried HTTP call cannot post twice. */
  idempotencyKey: string;
  media: MediaToAttach[];
}

export interface PublishedPost {
  id: string;
  url: string;
}

export interface AuthorizeRequest {
  state: string;
  codeChallenge: string;
  redirectUri: string;
}

export interface PlatformAdapter {
  readonly platform: string;
  /**
   * True when a publish repeated with the same `idempotencyKey` posts once (Mastodon's
   * Idempotency-Key): a call cut off mid-way is then simply made again.
   */
  readonly idempotent: boolean;
  authorizeUrl(request: AuthorizeRequest): string;
  exchangeCode(request: { code: string; codeVerifier: string; redirectUri: string }): Promise<TokenSet>;
  refresh(refreshToken: string): Promise<TokenSet>;
  account(accessToken: string): Promise<PlatformAccount>;
  publish(accessToken: string, account: PlatformAccount, post: PublishRequest): Promise<PublishedPost>;
}

/**
 * How a call to a platform failed, which decides what happens next:
 * - `rejected`: the platform definitely refused the credentials (invalid_grant, 401, 403): the
 *   integration needs reconnecting;
 * - `invalid`: the platform definitely refused this request (e.g. 422, text too long);
 * - `transient`: nothing happened and it may work later (network error before sending, 5xx, 429);
 * - `timeout`: the request went out and no answer came back, so the outcome is unknown.
 */
export type PlatformErrorKind = 'rejected' | 'invalid' | 'transient' | 'timeout';

export class PlatformError extends Error {
  constructor(
    readonly kind: PlatformErrorKind,
    message: string,
    readonly status?: number,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'PlatformError';
  }
}

export interface PlatformHttpOptions {
  timeoutMs: number;
}

/**
 * One HTTP call to a platform, with a deadline, mapped to `PlatformError` kinds. Answers the parsed
 * JSON body of a 2xx answer.
 */
export async function callPlatform<T>(
  platform: string,
  url: string,
  init: RequestInit,
  options: PlatformHttpOptions & { authFailure?: (status: number, body: unknown) => boolean },
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(options.timeoutMs) });
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      throw new PlatformError('timeout', `${platform} did not answer within ${options.timeoutMs} ms`);
    }
    throw new PlatformError('transient', `${platform} could not be reached: ${(error as Error).message}`);
  }
  let body: unknown;
  let text = '';
  try {
    text = await response.text();
    body = text ? JSON.parse(text) : undefined;
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      throw new PlatformError('timeout', `${platform} did not finish its answer within ${options.timeoutMs} ms`);
    }
    body = text;
  }
  if (response.ok) return body as T;

  const message = `${platform} answered ${response.status}: ${describeError(body)}`;
  if (response.status === 429) {
    const retryAfter = Number(response.headers.get('retry-after'));
    throw new PlatformError(
      'transient',
      message,
      429,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
    );
  }
  if (response.status >= 500 || response.status === 408) throw new PlatformError('transient', message, response.status);
  const rejected = options.authFailure?.(response.status, body) ?? (response.status === 401 || response.status === 403);
  throw new PlatformError(rejected ? 'rejected' : 'invalid', message, response.status);
}

/** The platform's own words for an error, short and without anything that looks like a token. */
function describeError(body: unknown): string {
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    const parts = [record.error, record.error_description, record.detail, record.title, record.message]
      .filter((part) => typeof part === 'string' && part)
      .map(String);
    const nested = Array.isArray(record.errors)
      ? (record.errors as Array<Record<string, unknown>>)
          .map((e) => e.message ?? e.detail)
          .filter(Boolean)
          .map(String)
      : [];
    const joined = [...new Set([...parts, ...nested])].join('; ');
    if (joined) return joined.slice(0, 500);
  }
  return typeof body === 'string' && body ? body.slice(0, 200) : 'no details';
}

/** The authorization-code request with PKCE (S256), as RFC 6749 and RFC 7636 spell it. */
export function authorizationCodeUrl(
  endpoint: string,
  clientId: string,
  scope: string,
  request: AuthorizeRequest,
): string {
  const url = new URL(endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: request.redirectUri,
    scope,
    state: request.state,
    code_challenge: request.codeChallenge,
    code_challenge_method: 'S256',
  }).toString();
  return url.toString();
}

/** OAuth token endpoints answer `invalid_grant` / `invalid_client` (400 or 401) for a definite refusal. */
export function isOAuthRefusal(status: number, body: unknown): boolean {
  const error = body && typeof body === 'object' ? (body as Record<string, unknown>).error : undefined;
  if (status === 401 || status === 403) return true;
  return status === 400 && (error === 'invalid_grant' || error === 'invalid_client' || error === 'unauthorized_client');
}

interface OAuthTokenAnswer {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number;
  scope?: string;
  token_type?: string;
}

export function toTokenSet(platform: string, answer: OAuthTokenAnswer, now = Date.now()): TokenSet {
  if (!answer || typeof answer.access_token !== 'string' || !answer.access_token) {
    throw new PlatformError('invalid', `${platform} answered the token request without an access token`);
  }
  const expiresIn = Number(answer.expires_in);
  return {
    accessToken: answer.access_token,
    refreshToken: typeof answer.refresh_token === 'string' && answer.refresh_token ? answer.refresh_token : undefined,
    expiresAt: Number.isFinite(expiresIn) && expiresIn > 0 ? new Date(now + expiresIn * 1000) : undefined,
    scope: typeof answer.scope === 'string' ? answer.scope : undefined,
  };
}

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
