import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Mastodon's and X's OAuth 2.0 and posting endpoints, speaking their wire
 * shapes: the authorize page (which approves at once and redirects back with a code), the token
 * endpoint (authorization code with PKCE S256 check, refresh), the account endpoint, and posting
 * (Mastodon statuses with Idempotency-Key, X tweets). Error modes are switched per test.
 */
export type Flavor = 'mastodon' | 'x';
export type PostMode = 'ok' | 'server-error' | 'rate-limited' | 'unauthorized' | 'hang' | 'slow';
export type RefreshMode = 'ok' | 'ok-without-refresh-token' | 'server-error' | 'invalid-grant';

export interface PostedStatus {
  id: string;
  text: string;
  mediaIds: string[];
  accessToken: string;
  idempotencyKey?: string;
  at: Date;
}

interface IssuedCode {
  challenge: string;
  redirectUri: string;
  clientId: string;
}

export class FakePlatform {
  readonly posts: PostedStatus[] = [];
  /** Raw multipart bodies of media uploads, by the id answered. */
  readonly media: Array<{ id: string; bytes: Buffer }> = [];
  readonly tokenRequests: Array<Record<string, string>> = [];
  postMode: PostMode = 'ok';
  /** Post requests received, a repeat under an earlier Idempotency-Key included. */
  postRequests = 0;
  /** When each post a `slow` platform holds right now (made, not yet answered) is due its answer. */
  private readonly held = new Set<{ answerAt: number }>();
  /** Posts whose caller went away (its connection closed) before the `slow` answer. */
  interrupted = 0;
  /** How long a `slow` platform takes to answer a post it has already made. */
  slowAnswerMs = 20_000;
  refreshMode: RefreshMode = 'ok';
  /** Lifetime of access tokens issued from now on; undefined: they do not expire (Mastodon's way). */
  expiresIn: number | undefined;
  private readonly codes = new Map<string, IssuedCode>();
  private readonly accessTokens = new Set<string>();
  private readonly refreshTokens = new Set<string>();
  private server?: http.Server;
  url = '';

  constructor(
    readonly flavor: Flavor,
    readonly clientId: string,
    readonly clientSecret: string,
  ) {
    this.expiresIn = flavor === 'x' ? 7200 : undefined;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((error) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /**
   * Posts a `slow` platform holds right now that are still `leftMs` or more from their answer. A caller
   * killed now is seen gone before it is answered only if its answer is not due meanwhile: killing a
   * process and seeing its sockets close takes this test's process a while under load.
   */
  holdingFor(leftMs: number): number {
    const now = Date.now();
    return [...this.held].filter((hold) => hold.answerAt - now >= leftMs).length;
  }

  /** Revokes every token issued so far (the user disconnected the app on the platform). */
  revokeAll(): void {
    this.accessTokens.clear();
    this.refreshTokens.clear();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const body = await readBody(req);
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(value));
    };
    const authorizePath = this.flavor === 'mastodon' ? '/oauth/authorize' : '/i/oauth2/authorize';
    const tokenPath = this.flavor === 'mastodon' ? '/oauth/token' : '/2/oauth2/token';

    if (req.method === 'GET' && url.pathname === authorizePath) {
      const q = url.searchParams;
      if (q.get('client_id') !== this.clientId) return json(400, { error: 'invalid_client' });
      if (
        q.get('response_type') !== 'code' ||
        q.get('code_challenge_method') !== 'S256' ||
        !q.get('code_challenge') ||
        !q.get('state')
      ) {
        return json(400, { error: 'invalid_request' });
      }
      const code = randomBytes(12).toString('hex');
      this.codes.set(code, {
        challenge: q.get('code_challenge')!,
        redirectUri: q.get('redirect_uri')!,
        clientId: this.clientId,
      });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { location: back.toString() });
      return void res.end();
    }

    if (req.method === 'POST' && url.pathname === tokenPath) {
      const form = Object.fromEntries(new URLSearchParams(body.toString()));
      this.tokenRequests.push(form);
      if (!this.clientAuthenticated(req, form)) return json(401, { error: 'invalid_client' });
      if (form.grant_type === 'authorization_code') {
        const issued = this.codes.get(form.code);
        this.codes.delete(form.code);
        if (!issued) return json(400, { error: 'invalid_grant', error_description: 'unknown or used code' });
        if (issued.redirectUri !== form.redirect_uri)
          return json(400, { error: 'invalid_grant', error_description: 'redirect_uri mismatch' });
        const challenge = createHash('sha256')
          .update(form.code_verifier ?? '')
          .digest('base64url');
        if (challenge !== issued.challenge)
          return json(400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
        return json(200, this.issue(true));
      }
      if (form.grant_type === 'refresh_token') {
        if (this.refreshMode === 'server-error') return json(503, { error: 'temporarily_unavailable' });
        if (this.refreshMode === 'invalid-grant' || !this.refreshTokens.has(form.refresh_token)) {
          return json(400, { error: 'invalid_grant', error_description: 'refresh token is invalid' });
        }
        if (this.refreshMode === 'ok') this.refreshTokens.delete(form.refresh_token);
        return json(200, this.issue(this.refreshMode === 'ok'));
      }
      return json(400, { error: 'unsupported_grant_type' });
    }

    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const authorized = token !== undefined && this.accessTokens.has(token);

    if (
      req.method === 'GET' &&
      (url.pathname === '/api/v1/accounts/verify_credentials' || url.pathname === '/2/users/me')
    ) {
      if (!authorized) return json(401, { error: 'The access token is invalid' });
      return this.flavor === 'mastodon'
        ? json(200, { id: '109', username: 'alice', acct: 'alice', url: `${this.url}/@alice` })
        : json(200, { data: { id: '4401', name: 'Alice', username: 'alice_x' } });
    }

    if (req.method === 'POST' && (url.pathname === '/api/v2/media' || url.pathname === '/2/media/upload')) {
      if (!authorized) return json(401, { error: 'The access token is invalid' });
      if (!String(req.headers['content-type']).startsWith('multipart/form-data'))
        return json(422, { error: 'File is missing' });
      const id = String(5000 + this.media.length);
      this.media.push({ id, bytes: body });
      return this.flavor === 'mastodon' ? json(200, { id, type: 'image' }) : json(200, { data: { id } });
    }

    if (req.method === 'POST' && (url.pathname === '/api/v1/statuses' || url.pathname === '/2/tweets')) {
      if (this.postMode === 'hang') return; // never answers: the caller's deadline decides
      if (!authorized || this.postMode === 'unauthorized')
        return json(
          401,
          this.flavor === 'x'
            ? { title: 'Unauthorized', detail: 'Unauthorized', status: 401 }
            : { error: 'The access token is invalid' },
        );
      if (this.postMode === 'server-error') return json(500, { error: 'Internal server error' });
      if (this.postMode === 'rate-limited') return json(429, { error: 'Too many requests' }, { 'retry-after': '60' });
      const parsed = JSON.parse(body.toString() || '{}') as {
        status?: string;
        text?: string;
        media_ids?: string[];
        media?: { media_ids?: string[] };
      };
      const text = this.flavor === 'mastodon' ? parsed.status : parsed.text;
      const mediaIds = (this.flavor === 'mastodon' ? parsed.media_ids : parsed.media?.media_ids) ?? [];
      if (mediaIds.some((id) => !this.media.some((m) => m.id === id))) return json(422, { error: 'unknown media id' });
      if (!text) return json(422, { error: "Validation failed: Text can't be blank" });
      const key = req.headers['idempotency-key'] as string | undefined;
      const earlier = key ? this.posts.find((p) => p.idempotencyKey === key) : undefined;
      const posted = earlier ?? {
        id: String(1000 + this.posts.length),
        text,
        mediaIds,
        accessToken: token,
        idempotencyKey: key,
        at: new Date(),
      };
      if (!earlier) this.posts.push(posted);
      this.postRequests += 1;
      // Posted at once, answered late: a caller killed meanwhile never learns that it went out.
      if (this.postMode === 'slow') {
        const hold = { answerAt: Date.now() + this.slowAnswerMs };
        this.held.add(hold);
        const cut = new Promise((resolve) => res.once('close', resolve));
        let answer: NodeJS.Timeout | undefined;
        await Promise.race([new Promise((resolve) => (answer = setTimeout(resolve, this.slowAnswerMs))), cut]);
        // A call cut off leaves no timer behind to keep the test's process alive.
        clearTimeout(answer);
        this.held.delete(hold);
        if (req.socket.destroyed) {
          this.interrupted += 1;
          return;
        }
      }
      return this.flavor === 'mastodon'
        ? json(200, { id: posted.id, url: `${this.url}/@alice/${posted.id}`, content: `<p>${text}</p>` })
        : json(201, { data: { id: posted.id, text } });
    }

    json(404, { error: 'Not found' });
  }

  private clientAuthenticated(req: http.IncomingMessage, form: Record<string, string>): boolean {
    if (this.flavor === 'mastodon') return form.client_id === this.clientId && form.client_secret === this.clientSecret;
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!basic) return false;
    const [id, secret] = Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent);
    return id === this.clientId && secret === this.clientSecret;
  }

  private issue(withRefreshToken: boolean): Record<string, unknown> {
    const accessToken = `at-${randomBytes(16).toString('hex')}`;
    this.accessTokens.add(accessToken);
    const answer: Record<string, unknown> = { access_token: accessToken, token_type: 'bearer', scope: 'write' };
    if (this.expiresIn !== undefined) answer.expires_in = this.expiresIn;
    if (withRefreshToken && this.flavor === 'x') {
      const refreshToken = `rt-${randomBytes(16).toString('hex')}`;
      this.refreshTokens.add(refreshToken);
      answer.refresh_token = refreshToken;
    }
    return answer;
  }
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
