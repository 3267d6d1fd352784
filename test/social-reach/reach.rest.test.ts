import 'reflect-metadata';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { createLogger } from '#lib/observability/logger.js';
import { publishOutcomes } from '#lib/observability/metrics.js';
import { startPublisherWorker } from '#subgraphs/social/index.js';
import { PlatformTokenService } from '#subgraphs/social/integrations/platform-token.service.js';
import { PublisherService } from '#subgraphs/social/publishing/publisher.service.js';
import { sweepMediaUploads } from '#subgraphs/social/media/media.service.js';
import { FakeImageApi, TINY_PNG } from './fake-image-api.js';
import { FakePlatform } from './fake-platforms.js';
import { freePort } from '#test/support/ports.js';
import { browserOf, fakePlatformEnv, sleep, until } from './helpers.js';

const runtimeOf = (platform: TestPlatform) => platform.subgraphs.social.runtime;

/**
 * The outward-facing half of the social service, over HTTP through the whole chain, against local
 * stand-ins that speak Mastodon's, X's and the OpenAI images API's wire protocols: OAuth connect
 * (PKCE, single-use state), token renewal, media uploads through signed URLs, AI images, and the
 * publisher on pg-boss (at its time, at most once, timeouts, rescheduling, two workers).
 */
describe('social reach: integrations, media, AI images, publisher', () => {
  let platform: TestPlatform;
  let base: string;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  const mastodon = new FakePlatform('mastodon', 'masto-client', 'masto-secret');
  const x = new FakePlatform('x', 'x-client', 'x-secret');
  const images = new FakeImageApi();
  const statements: string[] = [];

  const sql = (text: string, params: unknown[] = []) =>
    platform.subgraphs.social.orm.em.fork().getConnection().execute(text, params);
  const mediaCount = async () => (await sql('select count(*)::int as n from social.media_file'))[0].n as number;

  /** Runs the browser's part of a connect: our connect URL, the platform's page, our callback. */
  async function connect(platformName: string, headers: Record<string, string>) {
    const start = await rest('GET', `${base}/api/integrations/${platformName}/connect`, undefined, headers);
    expect(start.status).toBe(302);
    const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    expect(authorize.status).toBe(302);
    const callbackUrl = authorize.headers.get('location')!;
    // The browser that started the connect comes back with its connect cookie.
    const callback = await rest('GET', callbackUrl, undefined, browserOf(start));
    return { start, callbackUrl, callback };
  }

  beforeAll(async () => {
    await Promise.all([mastodon.start(), x.start(), images.start()]);
    const port = await freePort();
    platform = await startTestPlatform(
      {
        ...fakePlatformEnv(port, { mastodon, x }),
        WEB_URL: 'http://web.test/app',
        PLATFORM_TIMEOUT_MS: '1500',
        AI_IMAGE_API_URL: `${images.url}/v1`,
        AI_IMAGE_API_KEY: 'sk-test',
        AI_IMAGE_MODEL: 'gpt-image-1',
        AI_IMAGE_RATE_LIMIT: '4',
        MEDIA_MAX_BYTES: '1000000',
      },
      { onQuery: (service, text) => service === 'social' && statements.push(text) },
    );
    base = platform.urls.socialRest;
    alice = { authorization: `Bearer ${await platform.token('alice')}` };
    bob = { authorization: `Bearer ${await platform.token('bob')}` };
  });

  afterAll(async () => {
    await platform?.stop();
    await Promise.all([mastodon.stop(), x.stop(), images.stop()]);
  });

  describe('integrations over OAuth', () => {
    it('redirects to the platform with the authorization-code flow, PKCE S256 and a state', async () => {
      const response = await rest('GET', `${base}/api/integrations/mastodon/connect`, undefined, alice);
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get('location')!);
      expect(location.origin + location.pathname).toBe(`${mastodon.url}/oauth/authorize`);
      expect(location.searchParams.get('response_type')).toBe('code');
      expect(location.searchParams.get('client_id')).toBe('masto-client');
      expect(location.searchParams.get('code_challenge_method')).toBe('S256');
      expect(location.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
      expect(location.searchParams.get('state')!.length).toBeGreaterThanOrEqual(32);
      expect(location.searchParams.get('redirect_uri')).toBe(
        `${base.replace('localhost', '127.0.0.1')}/api/integrations/mastodon/callback`,
      );
    });

    it('connects Mastodon: exchanges the code with the verifier, stores tokens sealed, redirects to the web app', async () => {
      const { callback } = await connect('mastodon', alice);
      expect(callback.status).toBe(302);
      expect(callback.headers.get('location')).toBe(
        'http://web.test/app/integrations?platform=mastodon&status=connected',
      );
      const exchange = mastodon.tokenRequests.at(-1)!;
      expect(exchange.grant_type).toBe('authorization_code');
      expect(exchange.code_verifier).toMatch(/^[\w-]{43,128}$/);

      const list = await rest('GET', `${base}/api/integrations`, undefined, alice);
      expect(list.status).toBe(200);
      expect(list.body.available).toEqual(['mastodon', 'x']);
      expect(list.body.data).toHaveLength(1);
      expect(list.body.data[0]).toMatchObject({
        platform: 'mastodon',
        status: 'connected',
        accountId: '109',
        accountName: 'alice',
      });
      expect(JSON.stringify(list.body)).not.toMatch(/at-[0-9a-f]{32}/);

      const [row] = await sql('select access_token_sealed from social.integration where owner_id = ?', ['alice']);
      expect(row.access_token_sealed).toMatch(/^v1\./);
      expect(row.access_token_sealed).not.toContain('at-');
      // Bob sees none of it.
      expect((await rest('GET', `${base}/api/integrations`, undefined, bob)).body.data).toEqual([]);
    });

    it('connects X with HTTP Basic client authentication and keeps its refresh token', async () => {
      const { callback } = await connect('x', alice);
      expect(callback.headers.get('location')).toContain('status=connected');
      const list = await rest('GET', `${base}/api/integrations`, undefined, alice);
      const xIntegration = list.body.data.find((i: { platform: string }) => i.platform === 'x');
      expect(xIntegration).toMatchObject({ accountName: 'alice_x', status: 'connected' });
      expect(new Date(xIntegration.tokenExpiresAt).getTime()).toBeGreaterThan(Date.now() + 7000_000);
      const [row] = await sql(
        `select refresh_token_sealed from social.integration where owner_id = 'alice' and platform = 'x'`,
      );
      expect(row.refresh_token_sealed).toMatch(/^v1\./);
    });

    it('refuses a replayed state, a forged state, a missing state; stores nothing', async () => {
      const before = await sql('select count(*)::int as n from social.integration');
      const { callbackUrl } = await connect('mastodon', bob);
      const replay = await rest('GET', callbackUrl);
      expect(replay.status).toBe(400);
      expect(replay.headers.get('content-type')).toContain('application/problem+json');
      expect(replay.body.errors).toEqual([{ field: 'state', message: 'has already been used' }]);

      const forged = await rest('GET', `${base}/api/integrations/mastodon/callback?code=abc&state=forged-state-value`);
      expect(forged.status).toBe(400);
      expect(forged.body.errors[0].field).toBe('state');

      const missing = await rest('GET', `${base}/api/integrations/mastodon/callback?code=abc`);
      expect(missing.status).toBe(400);
      expect(missing.body.errors[0].field).toBe('state');
      // Bob's one successful connect is the only new row.
      const after = await sql('select count(*)::int as n from social.integration');
      expect(after[0].n).toBe(before[0].n + 1);
    });

    it('refuses an expired state', async () => {
      const start = await rest('GET', `${base}/api/integrations/mastodon/connect`, undefined, bob);
      const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' });
      await sql(
        `update social.oauth_state set expires_at = now() - interval '1 second' where owner_id = 'bob' and used_at is null`,
      );
      const late = await rest('GET', authorize.headers.get('location')!);
      expect(late.status).toBe(400);
      expect(late.body.errors).toEqual([{ field: 'state', message: 'has expired; start connecting again' }]);
    });

    it('fails the connect when PKCE verification fails at the platform, storing nothing', async () => {
      // The code was issued for connect A's challenge; redeemed with connect B's state, the
      // service sends B's verifier, and the platform refuses it.
      const a = await rest('GET', `${base}/api/integrations/x/connect`, undefined, bob);
      const b = await rest('GET', `${base}/api/integrations/x/connect`, undefined, bob);
      const codeForA = new URL(
        (await fetch(a.headers.get('location')!, { redirect: 'manual' })).headers.get('location')!,
      ).searchParams.get('code')!;
      const stateB = new URL(b.headers.get('location')!).searchParams.get('state')!;
      const callback = await rest(
        'GET',
        `${base}/api/integrations/x/callback?code=${codeForA}&state=${encodeURIComponent(stateB)}`,
        undefined,
        browserOf(b),
      );
      expect(callback.status).toBe(302);
      expect(callback.headers.get('location')).toBe(
        'http://web.test/app/integrations?platform=x&status=error&error=exchange_failed',
      );
      expect(x.tokenRequests.at(-1)!.grant_type).toBe('authorization_code');
      const rows = await sql(`select platform from social.integration where owner_id = 'bob'`);
      expect(rows.map((r) => r.platform)).toEqual(['mastodon']);
    });

    it('refuses a state used on another platform than it was issued for', async () => {
      const start = await rest('GET', `${base}/api/integrations/mastodon/connect`, undefined, bob);
      const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
      const wrong = await rest(
        'GET',
        `${base}/api/integrations/x/callback?code=abc&state=${encodeURIComponent(state)}`,
      );
      expect(wrong.status).toBe(400);
      expect(wrong.body.errors[0].field).toBe('state');
    });

    it('answers 404 for an unknown or unconfigured platform, never a redirect', async () => {
      for (const name of ['myspace', 'linkedin', '..%2F..%2Fevil', 'http%3A%2F%2Fevil.test']) {
        const response = await rest('GET', `${base}/api/integrations/${name}/connect`, undefined, alice);
        expect(response.status).toBe(404);
        expect(response.headers.get('location')).toBeNull();
        expect(response.body.detail).toMatch(/not available/);
      }
      const callback = await rest('GET', `${base}/api/integrations/myspace/callback?code=a&state=b`);
      expect(callback.status).toBe(404);
    });

    it('needs a bearer token and the integration scopes', async () => {
      expect((await rest('GET', `${base}/api/integrations/mastodon/connect`)).status).toBe(401);
      expect((await rest('GET', `${base}/api/integrations`)).status).toBe(401);
      const readOnly = { authorization: `Bearer ${await platform.token('carol', ['integrations.read'])}` };
      expect((await rest('GET', `${base}/api/integrations`, undefined, readOnly)).status).toBe(200);
      expect((await rest('GET', `${base}/api/integrations/mastodon/connect`, undefined, readOnly)).status).toBe(403);
      const writeOnly = { authorization: `Bearer ${await platform.token('carol', ['integrations.write'])}` };
      expect((await rest('GET', `${base}/api/integrations`, undefined, writeOnly)).status).toBe(403);
    });

    it('serves the same integrations through the gateway, with no token anywhere in the schema', async () => {
      const answer = await graphql<{
        integrations: Array<{ platform: string; status: string }>;
        integrationPlatforms: string[];
      }>(
        platform.urls.gateway,
        'query { integrations { platform status accountName } integrationPlatforms }',
        {},
        alice,
      );
      expect(answer.body.errors).toBeUndefined();
      // The graph names platforms by its enum; the REST list above says mastodon and x.
      expect(answer.body.data!.integrations.map((i) => i.platform)).toEqual(['MASTODON', 'X']);
      expect(answer.body.data!.integrationPlatforms).toEqual(['MASTODON', 'X']);
      const type = await graphql<{ __type: { fields: Array<{ name: string }> } }>(
        platform.urls.gateway,
        '{ __type(name: "Integration") { fields { name } } }',
      );
      expect(
        type.body
          .data!.__type.fields.map((f) => f.name)
          .filter((name) => /token(?!ExpiresAt)|sealed|secret/i.test(name)),
      ).toEqual([]);
      const anonymous = await graphql(platform.urls.gateway, 'query { integrations { platform } }');
      expect(anonymous.body.errors![0].extensions!.code).toBe('UNAUTHENTICATED');
    });

    it('sends the browser back with an error when the user declines, storing nothing', async () => {
      const start = await rest('GET', `${base}/api/integrations/x/connect`, undefined, bob);
      const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
      // The decline comes back in the browser that started the connect, with its cookie (test/security/oauth-binding.test.ts).
      const declined = await rest(
        'GET',
        `${base}/api/integrations/x/callback?error=access_denied&state=${encodeURIComponent(state)}`,
        undefined,
        browserOf(start),
      );
      expect(declined.status).toBe(302);
      expect(declined.headers.get('location')).toBe(
        'http://web.test/app/integrations?platform=x&status=error&error=access_denied',
      );
      expect(
        (await rest('GET', `${base}/api/integrations`, undefined, bob)).body.data.map(
          (i: { platform: string }) => i.platform,
        ),
      ).toEqual(['mastodon']);
    });
  });

  describe('media', () => {
    const upload = (body: unknown, headers = alice) => rest('POST', `${base}/api/media/upload`, body, headers);
    const put = (url: string, bytes: Buffer, contentType = 'image/png') =>
      fetch(url, { method: 'PUT', headers: { 'content-type': contentType }, body: new Uint8Array(bytes) });

    it('hands out a signed upload URL for a declared file, and lists the file once its bytes arrived', async () => {
      const grant = await upload({ filename: 'cat.png', contentType: 'image/png', size: TINY_PNG.length });
      expect(grant.status).toBe(200);
      expect(grant.body).toMatchObject({ method: 'PUT', headers: { 'content-type': 'image/png' } });
      expect(grant.body.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(grant.body.uploadUrl).toMatch(new RegExp(`^${base.replace('localhost', '127.0.0.1')}/storage/`));
      expect(new Date(grant.body.expiresAt).getTime()).toBeGreaterThan(Date.now());

      expect((await rest('GET', `${base}/api/media`, undefined, alice)).body.total).toBe(0);
      const sent = await put(grant.body.uploadUrl, TINY_PNG);
      expect(sent.status).toBe(200);

      const list = await rest('GET', `${base}/api/media`, undefined, alice);
      expect(list.status).toBe(200);
      expect(list.body).toMatchObject({ page: 1, limit: 20, total: 1 });
      expect(list.body.data[0]).toMatchObject({
        id: grant.body.id,
        filename: 'cat.png',
        contentType: 'image/png',
        size: TINY_PNG.length,
        status: 'ready',
        source: 'upload',
      });
      const bytes = Buffer.from(await (await fetch(list.body.data[0].url)).arrayBuffer());
      expect(bytes.equals(TINY_PNG)).toBe(true);
      // Not Bob's.
      expect((await rest('GET', `${base}/api/media`, undefined, bob)).body.total).toBe(0);
      // The URL is single-use: the object exists now.
      expect((await put(grant.body.uploadUrl, TINY_PNG)).status).toBe(409);
    });

    it('enforces the declared type and size on the upload URL, and refuses forged or expired URLs', async () => {
      const grant = await upload({ filename: 'dog.png', contentType: 'image/png', size: TINY_PNG.length });
      expect((await put(grant.body.uploadUrl, TINY_PNG, 'image/jpeg')).status).toBe(400);
      expect((await put(grant.body.uploadUrl, Buffer.concat([TINY_PNG, Buffer.from('extra')]))).status).toBe(400);
      const forgedUrl = grant.body.uploadUrl.replace(/.$/, (c: string) => (c === 'A' ? 'B' : 'A'));
      expect((await put(forgedUrl, TINY_PNG)).status).toBe(403);
      const storage = runtimeOf(platform).media.storage;
      const expired = await storage.presignPut(`media/${grant.body.id}`, {
        contentType: 'image/png',
        size: TINY_PNG.length,
        expiresInSeconds: -1,
        baseUrl: base,
      });
      const refused = await put(expired.url, TINY_PNG);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { detail: string }).detail).toMatch(/expired/);
      // Nothing arrived, so nothing is listed.
      const list = await rest('GET', `${base}/api/media`, undefined, alice);
      expect(list.body.data.map((m: { id: string }) => m.id)).not.toContain(grant.body.id);
    });

    it('refuses bad declarations with a problem naming the field, storing nothing', async () => {
      const before = await mediaCount();
      const cases: Array<[unknown, number, string]> = [
        [{ filename: 'x.exe', contentType: 'application/x-msdownload', size: 10 }, 400, 'contentType'],
        [{ filename: 'x.png', contentType: 'image/png', size: 0 }, 400, 'size'],
        [{ filename: 'x.png', contentType: 'image/png', size: 1_000_001 }, 413, 'size'],
        [{ filename: '   ', contentType: 'image/png', size: 10 }, 400, 'filename'],
        [{ contentType: 'image/png', size: 10 }, 400, 'filename'],
        [{ filename: 'x.png', contentType: 'image/png', size: 'big' }, 400, 'size'],
      ];
      for (const [body, status, field] of cases) {
        const response = await upload(body);
        expect([response.status, response.body.errors?.[0]?.field]).toEqual([status, field]);
        expect(response.headers.get('content-type')).toContain('application/problem+json');
      }
      expect(await mediaCount()).toBe(before);
    });

    it('lists media as a cursor connection through the gateway', async () => {
      const answer = await graphql<{
        media: {
          totalCount: number;
          nodes: Array<{ filename: string; url: string }>;
          pageInfo: { hasNextPage: boolean };
        };
      }>(
        platform.urls.gateway,
        'query { media(first: 1) { totalCount nodes { filename url } pageInfo { hasNextPage } } }',
        {},
        alice,
      );
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data!.media.totalCount).toBe(1);
      expect(answer.body.data!.media.nodes[0].filename).toBe('cat.png');
      expect(answer.body.data!.media.pageInfo.hasNextPage).toBe(false);
    });

    it('needs media.read to list and media.write to upload', async () => {
      const reader = { authorization: `Bearer ${await platform.token('alice', ['media.read'])}` };
      expect((await rest('GET', `${base}/api/media`, undefined, reader)).status).toBe(200);
      expect((await upload({ filename: 'a.png', contentType: 'image/png', size: 5 }, reader)).status).toBe(403);
      expect((await rest('GET', `${base}/api/media`)).status).toBe(401);
    });

    it('lists a page of media in a fixed number of SQL statements, however many files', async () => {
      const frank = { authorization: `Bearer ${await platform.token('frank')}` };
      const count = async () => {
        statements.length = 0;
        const response = await rest('GET', `${base}/api/media?limit=50`, undefined, frank);
        expect(response.status).toBe(200);
        return statements
          .map((s) => stripVTControlCharacters(s))
          .filter((s) => /\[query\] (select|insert|update|delete)\b/i.test(s)).length;
      };
      for (let i = 0; i < 2; i++) {
        const grant = await upload({ filename: `f${i}.png`, contentType: 'image/png', size: TINY_PNG.length }, frank);
        await put(grant.body.uploadUrl, TINY_PNG);
      }
      await rest('GET', `${base}/api/media`, undefined, frank); // settles the arrived uploads
      const few = await count();
      for (let i = 2; i < 12; i++) {
        const grant = await upload({ filename: `f${i}.png`, contentType: 'image/png', size: TINY_PNG.length }, frank);
        await put(grant.body.uploadUrl, TINY_PNG);
      }
      await rest('GET', `${base}/api/media`, undefined, frank);
      const many = await count();
      expect(many).toBe(few);
      expect(many).toBe(3); // pending uploads, the page, its total
    });

    it('lists a file only once its bytes arrived and were checked: a wrong type never gets listed', async () => {
      const gina = { authorization: `Bearer ${await platform.token('gina')}` };
      const listed = async () =>
        (await rest('GET', `${base}/api/media`, undefined, gina)).body.data.map(
          (m: { id: string }) => m.id,
        ) as string[];
      const grant = await upload({ filename: 'real.png', contentType: 'image/png', size: TINY_PNG.length }, gina);
      expect(await listed()).toEqual([]);
      // A PDF (or anything) of the declared size, sent as image/png: the upload URL takes it, the commit does not.
      const fake = await upload({ filename: 'fake.png', contentType: 'image/png', size: TINY_PNG.length }, gina);
      const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(TINY_PNG.length - 9, 0x20)]);
      expect((await put(fake.body.uploadUrl, pdf)).status).toBe(200);
      expect((await put(grant.body.uploadUrl, TINY_PNG)).status).toBe(200);
      expect(await listed()).toEqual([grant.body.id]);
      expect(await listed()).toEqual([grant.body.id]);
      const [row] = await sql('select status from social.media_file where id = ?', [fake.body.id]);
      expect(row.status).toBe('pending');
      const storage = runtimeOf(platform).media.storage;
      expect(await storage.size(`staging/media/${fake.body.id}`)).toBeNull();
      expect(await storage.size(`media/${fake.body.id}`)).toBeNull();
      // Not by id either.
      const one = await graphql<{ mediaFile: unknown }>(
        platform.urls.gateway,
        'query ($id: ID!) { mediaFile(id: $id) { id } }',
        { id: fake.body.id },
        gina,
      );
      expect(one.body.data!.mediaFile).toBeNull();
    });

    it('sweeps uploads whose URL expired: never sent ones go, rows and bytes; arrived ones are committed; listed ones stay', async () => {
      const hugo = { authorization: `Bearer ${await platform.token('hugo')}` };
      const never = await upload({ filename: 'never.png', contentType: 'image/png', size: TINY_PNG.length }, hugo);
      const wrong = await upload({ filename: 'wrong.png', contentType: 'image/png', size: 4 }, hugo);
      expect((await put(wrong.body.uploadUrl, Buffer.from('GIF8'))).status).toBe(200);
      const listedOne = await upload({ filename: 'listed.png', contentType: 'image/png', size: TINY_PNG.length }, hugo);
      await put(listedOne.body.uploadUrl, TINY_PNG);
      await rest('GET', `${base}/api/media`, undefined, hugo);
      const unread = await upload({ filename: 'unread.png', contentType: 'image/png', size: TINY_PNG.length }, hugo);
      await put(unread.body.uploadUrl, TINY_PNG);
      const ids = [never, wrong, listedOne, unread].map((grant) => grant.body.id as string);
      const statuses = async () =>
        Object.fromEntries(
          (await sql('select id, status from social.media_file where id in (?, ?, ?, ?)', ids)).map((r) => [
            r.id,
            r.status,
          ]),
        );

      const { orm } = platform.subgraphs.social;
      const media = runtimeOf(platform).media;
      expect(await sweepMediaUploads(orm.em.fork(), media, new Date())).toBe(0);
      expect(Object.keys(await statuses())).toHaveLength(4);
      // Two processes sweeping at once: each upload is committed or dropped by one of them.
      const later = new Date(Date.now() + 3600_000);
      const swept = await Promise.all([
        sweepMediaUploads(orm.em.fork(), media, later),
        sweepMediaUploads(orm.em.fork(), media, later),
      ]);
      expect(swept[0] + swept[1]).toBeGreaterThanOrEqual(2);
      expect(await statuses()).toEqual({ [listedOne.body.id]: 'ready', [unread.body.id]: 'ready' });
      for (const id of [never.body.id, wrong.body.id]) {
        expect(await media.storage.size(`staging/media/${id}`)).toBeNull();
        expect(await media.storage.size(`media/${id}`)).toBeNull();
      }
      expect(await media.storage.size(`media/${unread.body.id}`)).toBe(TINY_PNG.length);
    });
  });

  describe('AI images', () => {
    const generate = (body: unknown, headers = alice) => rest('POST', `${base}/api/ai/generate-image`, body, headers);

    it('generates an image through the OpenAI-compatible API and stores it as a media file', async () => {
      const response = await generate({ prompt: 'a lighthouse at dawn', size: '1024x1024' });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        contentType: 'image/png',
        source: 'ai',
        prompt: 'a lighthouse at dawn',
        size: TINY_PNG.length,
        status: 'ready',
      });
      expect(images.requests.at(-1)!.body).toMatchObject({
        model: 'gpt-image-1',
        prompt: 'a lighthouse at dawn',
        size: '1024x1024',
        n: 1,
      });
      const bytes = Buffer.from(await (await fetch(response.body.url)).arrayBuffer());
      expect(bytes.equals(TINY_PNG)).toBe(true);
      const list = await rest('GET', `${base}/api/media`, undefined, alice);
      expect(list.body.data.map((m: { id: string }) => m.id)).toContain(response.body.id);
    });

    it('fetches the image when the provider answers with a URL', async () => {
      images.mode = 'url';
      try {
        const response = await generate({ prompt: 'a red fox' }, bob);
        expect(response.status).toBe(200);
        expect(response.body.contentType).toBe('image/png');
      } finally {
        images.mode = 'b64_json';
      }
    });

    it('answers 502 and stores nothing when the provider fails or sends no image', async () => {
      for (const mode of ['server-error', 'not-an-image'] as const) {
        images.mode = mode;
        const before = await mediaCount();
        const response = await generate({ prompt: 'anything' }, bob);
        expect(response.status).toBe(502);
        expect(response.headers.get('content-type')).toContain('application/problem+json');
        expect(JSON.stringify(response.body)).not.toMatch(/stack|at .*\.ts/);
        expect(await mediaCount()).toBe(before);
      }
      images.mode = 'b64_json';
    });

    it('refuses an empty or overlong prompt and an unknown size', async () => {
      const calls = images.requests.length;
      for (const [body, field] of [
        [{ prompt: '' }, 'prompt'],
        [{ prompt: '   ' }, 'prompt'],
        [{}, 'prompt'],
        [{ prompt: 'x'.repeat(4001) }, 'prompt'],
        [{ prompt: 'ok', size: '3x3' }, 'size'],
      ] as const) {
        const response = await generate(body);
        expect([response.status, response.body.errors?.[0]?.field]).toEqual([400, field]);
      }
      expect(images.requests.length).toBe(calls);
    });

    it('limits each user to AI_IMAGE_RATE_LIMIT images a minute: 429 with Retry-After', async () => {
      const dave = { authorization: `Bearer ${await platform.token('dave')}` };
      for (let i = 0; i < 4; i++) expect((await generate({ prompt: `image ${i}` }, dave)).status).toBe(200);
      const limited = await generate({ prompt: 'one more' }, dave);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.headers.get('content-type')).toContain('application/problem+json');
      // Someone else is not held back by Dave's use.
      expect(
        (await generate({ prompt: 'mine' }, { authorization: `Bearer ${await platform.token('gina')}` })).status,
      ).toBe(200);
    });

    it('needs media.write', async () => {
      const reader = { authorization: `Bearer ${await platform.token('alice', ['media.read'])}` };
      expect((await generate({ prompt: 'x' }, reader)).status).toBe(403);
    });
  });

  describe('an API key limited to some brands', () => {
    const gql = <Data = Record<string, any>>(
      query: string,
      variables: Record<string, unknown>,
      headers: Record<string, string>,
    ) => graphql<Data>(platform.urls.gateway, query, variables, headers);
    const codeOf = (body: { errors?: Array<{ extensions?: Record<string, unknown> }> }) =>
      body.errors?.[0]?.extensions?.code;
    const requestUpload = (input: Record<string, unknown>, headers: Record<string, string>) =>
      gql(
        'mutation ($input: MediaUploadInput!) { requestMediaUpload(input: $input) { id uploadUrl } }',
        { input: { filename: 'pic.png', contentType: 'image/png', size: TINY_PNG.length, ...input } },
        headers,
      );
    const listed = async (headers: Record<string, string>) =>
      (
        await gql<{ media: { nodes: Array<{ id: string }> } }>('{ media(first: 100) { nodes { id } } }', {}, headers)
      ).body
        .data!.media.nodes.map((node) => node.id)
        .sort();
    let carol: Record<string, string>;
    let brandA: string;
    let brandB: string;
    let keyA: Record<string, string>;
    const files: Record<'a' | 'b' | 'owner', string> = { a: '', b: '', owner: '' };

    beforeAll(async () => {
      carol = { authorization: `Bearer ${await platform.token('carol')}` };
      const brand = async (name: string) =>
        (await gql('mutation ($name: String!) { createBrand(input: { name: $name }) { id } }', { name }, carol)).body
          .data!.createBrand.id as string;
      brandA = await brand('A');
      brandB = await brand('B');
      for (const [file, brandId] of [
        ['a', brandA],
        ['b', brandB],
        ['owner', null],
      ] as const) {
        const grant = (await requestUpload({ brandId }, carol)).body.data!.requestMediaUpload;
        const sent = await fetch(grant.uploadUrl, {
          method: 'PUT',
          headers: { 'content-type': 'image/png' },
          body: new Uint8Array(TINY_PNG),
        });
        expect(sent.status).toBe(200);
        files[file] = grant.id;
      }
      const scopes = ['media.read', 'media.write', 'integrations.read', 'integrations.write', `brand:${brandA}`];
      const made = await gql(
        'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }',
        { input: { name: 'brand A only', scopes } },
        carol,
      );
      keyA = { 'x-api-key': made.body.data!.createApiKey.key };
    });

    it("lists and shows only its brands' media; the owner's bearer token sees them all", async () => {
      expect(await listed(keyA)).toEqual([files.a]);
      expect(await listed(carol)).toEqual([files.a, files.b, files.owner].sort());
      const fileOf = async (id: string) =>
        (await gql('query ($id: ID!) { mediaFile(id: $id) { id } }', { id }, keyA)).body.data!.mediaFile;
      expect(await fileOf(files.a)).toEqual({ id: files.a });
      expect(await fileOf(files.b)).toBeNull();
      expect(await fileOf(files.owner)).toBeNull();
    });

    it('uploads only into its brands, and must name one', async () => {
      const before = await mediaCount();
      expect(codeOf((await requestUpload({ brandId: brandB }, keyA)).body)).toBe('NOT_FOUND');
      const unnamed = await requestUpload({}, keyA);
      expect(codeOf(unnamed.body)).toBe('BAD_USER_INPUT');
      expect(JSON.stringify(unnamed.body.errors)).toContain('brandId');
      expect(await mediaCount()).toBe(before);
      expect((await requestUpload({ brandId: brandA }, keyA)).body.data!.requestMediaUpload.id).toMatch(
        /^[0-9a-f-]{36}$/,
      );
    });

    it('generates images only into its brands', async () => {
      const generate = (brandId?: string) =>
        gql(
          'mutation ($input: GenerateImageInput!) { generateImage(input: $input) { id brandId } }',
          { input: { prompt: 'a red door', brandId } },
          keyA,
        );
      const before = await mediaCount();
      const requests = images.requests.length;
      expect(codeOf((await generate(brandB)).body)).toBe('NOT_FOUND');
      expect(codeOf((await generate()).body)).toBe('BAD_USER_INPUT');
      expect(await mediaCount()).toBe(before);
      expect(images.requests.length).toBe(requests);
      expect((await generate(brandA)).body.data!.generateImage).toMatchObject({ brandId: brandA });
    });

    it("lists the owner's platform accounts but cannot connect one, which would serve every brand", async () => {
      expect((await gql('{ integrations { platform } }', {}, keyA)).body.data).toEqual({ integrations: [] });
      const start = await gql(
        'mutation { startIntegrationConnect(platform: MASTODON, browserBinding: ' +
          '"0000000000000000000000000000000000000000000000000000000000000000") { authorizeUrl } }',
        {},
        keyA,
      );
      expect(codeOf(start.body)).toBe('FORBIDDEN');
      const everyBrand = await gql(
        'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }',
        { input: { name: 'all brands', scopes: ['integrations.write'] } },
        carol,
      );
      const withEveryBrand = { 'x-api-key': everyBrand.body.data!.createApiKey.key as string };
      const allowed = await gql(
        'mutation { startIntegrationConnect(platform: MASTODON, browserBinding: ' +
          '"0000000000000000000000000000000000000000000000000000000000000000") { authorizeUrl } }',
        {},
        withEveryBrand,
      );
      expect(allowed.body.data!.startIntegrationConnect.authorizeUrl).toContain(mastodon.url);
    });
  });

  describe('publisher', () => {
    const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
    const createPost = async (body: Record<string, unknown>, headers = alice) => {
      const response = await rest('POST', `${base}/api/posts`, body, headers);
      expect(response.status).toBe(201);
      expect(response.body.status).toBe('queued');
      return response.body as { id: string };
    };
    const item = async (id: string, headers = alice) =>
      (await rest('GET', `${base}/api/content-ops/items/${id}`, undefined, headers)).body;
    const settled = (id: string, headers = alice) =>
      until(async () => {
        const current = await item(id, headers);
        return current.status === 'published' || current.status === 'failed' ? current : null;
      });
    const postedTexts = (fake: FakePlatform, text: string) => fake.posts.filter((p) => p.text === text).length;

    it('publishes a queued post at its scheduled time, once, and stores the platform post id and URL', async () => {
      const scheduledAt = inSeconds(2);
      const text = `Hello at ${scheduledAt}`;
      const post = await createPost({ content: text, platforms: ['mastodon', 'x'], scheduledAt });
      await sleep(500);
      expect(postedTexts(mastodon, text)).toBe(0);
      const done = await settled(post.id);
      expect(done.status).toBe('published');
      expect(new Date(done.publishedAt).getTime()).toBeGreaterThanOrEqual(new Date(scheduledAt).getTime());
      expect(mastodon.posts.find((p) => p.text === text)!.at.getTime()).toBeGreaterThanOrEqual(
        new Date(scheduledAt).getTime(),
      );
      const byPlatform = Object.fromEntries(done.attempts.map((a: { platform: string }) => [a.platform, a]));
      expect(byPlatform.mastodon).toMatchObject({
        status: 'succeeded',
        platformPostId: expect.any(String),
        error: null,
      });
      expect(byPlatform.mastodon.url).toBe(`${mastodon.url}/@alice/${byPlatform.mastodon.platformPostId}`);
      expect(byPlatform.x).toMatchObject({
        status: 'succeeded',
        url: `https://x.com/alice_x/status/${byPlatform.x.platformPostId}`,
      });
      expect(mastodon.posts.find((p) => p.text === text)!.idempotencyKey).toBe(byPlatform.mastodon.id);
      const types = (
        await rest('GET', `${base}/api/content-ops/events?contentId=${post.id}`, undefined, alice)
      ).body.data.map((e: { type: string }) => e.type);
      expect(types.filter((t: string) => t === 'published')).toHaveLength(2);
      expect(types).toContain('publishing');
      await sleep(2500);
      expect([postedTexts(mastodon, text), postedTexts(x, text)]).toEqual([1, 1]);
    });

    it("attaches the post's media files: uploaded to the platform first, then referenced by the status", async () => {
      const media = (await rest('GET', `${base}/api/media?limit=1`, undefined, alice)).body.data[0];
      const text = `With a picture ${Date.now()}`;
      const post = await createPost({
        content: text,
        platforms: ['mastodon'],
        mediaIds: [media.id],
        scheduledAt: inSeconds(1),
      });
      expect((await settled(post.id)).status).toBe('published');
      const status = mastodon.posts.find((p) => p.text === text)!;
      expect(status.mediaIds).toHaveLength(1);
      const uploaded = mastodon.media.find((m) => m.id === status.mediaIds[0])!;
      expect(uploaded.bytes.includes(TINY_PNG)).toBe(true);
    });

    it('ends a timed-out publish failed with that reason, and never posts it again', async () => {
      mastodon.postMode = 'hang';
      const text = `Timeout ${Date.now()}`;
      const post = await createPost({ content: text, platforms: ['mastodon'], scheduledAt: inSeconds(1) });
      const done = await settled(post.id);
      mastodon.postMode = 'ok';
      expect(done.status).toBe('failed');
      expect(done.attempts).toHaveLength(1);
      expect(done.attempts[0].status).toBe('failed');
      expect(done.attempts[0].error).toMatch(/did not answer within 1500 ms.*not posted again/);
      await sleep(3000);
      const later = await item(post.id);
      expect(later.status).toBe('failed');
      expect(later.attempts).toHaveLength(1);
      expect(postedTexts(mastodon, text)).toBe(0);
      const types = (
        await rest('GET', `${base}/api/content-ops/events?contentId=${post.id}`, undefined, alice)
      ).body.data.map((e: { type: string }) => e.type);
      expect(types).toContain('publish_failed');
    });

    it("stores the platform's error on failure (5xx, 429) and keeps the account connected", async () => {
      for (const mode of ['server-error', 'rate-limited'] as const) {
        mastodon.postMode = mode;
        const post = await createPost({
          content: `Failing ${mode}`,
          platforms: ['mastodon'],
          scheduledAt: inSeconds(1),
        });
        const done = await settled(post.id);
        expect(done.status).toBe('failed');
        expect(done.attempts[0].error).toMatch(
          mode === 'server-error' ? /mastodon answered 500: Internal server error/ : /mastodon answered 429/,
        );
      }
      mastodon.postMode = 'ok';
      const list = await rest('GET', `${base}/api/integrations`, undefined, alice);
      expect(list.body.data.find((i: { platform: string }) => i.platform === 'mastodon').status).toBe('connected');
    });

    it('retrying a failed post publishes it (the explicit retry is the user asking again)', async () => {
      mastodon.postMode = 'server-error';
      const text = `Retry me ${Date.now()}`;
      const post = await createPost({ content: text, platforms: ['mastodon'], scheduledAt: inSeconds(1) });
      expect((await settled(post.id)).status).toBe('failed');
      mastodon.postMode = 'ok';
      const retried = await rest('POST', `${base}/api/content-ops/items/${post.id}/retry`, undefined, alice);
      expect(retried.status).toBe(200);
      const done = await until(async () => ((await item(post.id)).status === 'published' ? item(post.id) : null));
      expect(done.attempts.map((a: { status: string }) => a.status)).toEqual(['failed', 'succeeded']);
      expect(postedTexts(mastodon, text)).toBe(1);
    });

    it('rescheduling cancels the pending job, so nothing goes out at the old time', async () => {
      const text = `Moved ${Date.now()}`;
      const post = await createPost({ content: text, platforms: ['mastodon'], scheduledAt: inSeconds(2) });
      const [oldJob] = await sql('select job_id from social.publish_job where post_id = ?', [post.id]);
      const moved = await rest(
        'POST',
        `${base}/api/content-ops/items/${post.id}/reschedule`,
        { scheduledAt: inSeconds(120) },
        alice,
      );
      expect([moved.status, moved.body.detail]).toEqual([200, undefined]);
      const [state] = await sql('select state from social_jobs.job where id = ?', [oldJob.job_id]);
      expect(state.state).toBe('cancelled');
      await sleep(3500);
      expect(postedTexts(mastodon, text)).toBe(0);
      expect((await item(post.id)).status).toBe('queued');

      const soon = await rest(
        'POST',
        `${base}/api/content-ops/items/${post.id}/reschedule`,
        { scheduledAt: inSeconds(1) },
        alice,
      );
      expect(soon.status).toBe(200);
      expect((await settled(post.id)).status).toBe('published');
      expect(postedTexts(mastodon, text)).toBe(1);
    });

    it('deleting a queued post cancels its job', async () => {
      const text = `Deleted ${Date.now()}`;
      const post = await createPost({ content: text, platforms: ['mastodon'], scheduledAt: inSeconds(2) });
      const [job] = await sql('select job_id from social.publish_job where post_id = ?', [post.id]);
      expect((await rest('DELETE', `${base}/api/posts/${post.id}`, undefined, alice)).status).toBe(204);
      const [state] = await sql('select state from social_jobs.job where id = ?', [job.job_id]);
      expect(state.state).toBe('cancelled');
      await sleep(3000);
      expect(postedTexts(mastodon, text)).toBe(0);
    });

    it('a post to a platform without a connected account fails with that reason', async () => {
      const henry = { authorization: `Bearer ${await platform.token('henry')}` };
      const post = await createPost(
        { content: 'nobody connected', platforms: ['mastodon'], scheduledAt: inSeconds(1) },
        henry,
      );
      const done = await settled(post.id, henry);
      expect(done.status).toBe('failed');
      expect(done.attempts[0].error).toMatch(/no mastodon account is connected/);
    });

    it('a definite 401 from the platform fails the post and marks the account needs_reconnect', async () => {
      mastodon.postMode = 'unauthorized';
      const post = await createPost({ content: 'revoked', platforms: ['mastodon'], scheduledAt: inSeconds(1) }, bob);
      const done = await settled(post.id, bob);
      mastodon.postMode = 'ok';
      expect(done.status).toBe('failed');
      const list = await rest('GET', `${base}/api/integrations`, undefined, bob);
      expect(list.body.data.find((i: { platform: string }) => i.platform === 'mastodon')).toMatchObject({
        status: 'needs_reconnect',
        lastError: expect.stringMatching(/401/),
      });
    });

    it('renews tokens before they expire: transient failures wait, a missing refresh token keeps the old one, a refusal disconnects', async () => {
      const erin = { authorization: `Bearer ${await platform.token('erin')}` };
      x.expiresIn = 120; // inside the renewal margin from the start
      x.refreshMode = 'ok';
      await connect('x', erin);
      const { integrations: clients } = runtimeOf(platform);
      const tokens = () => new PlatformTokenService(platform.subgraphs.social.orm.em.fork(), clients);
      const refreshRequests = () => x.tokenRequests.filter((r) => r.grant_type === 'refresh_token');
      const erinRow = async () => (await sql(`select * from social.integration where owner_id = 'erin'`))[0];
      const firstRefreshToken = clients.cipher.open(
        (await erinRow()).refresh_token_sealed,
        `integration:${(await erinRow()).id}:refresh`,
      );

      // A 503 from the token endpoint: still connected, the reason noted, the token still used while valid.
      x.refreshMode = 'server-error';
      const outcome = await tokens().refreshDue();
      expect(outcome.deferred).toBeGreaterThanOrEqual(1);
      expect(await erinRow()).toMatchObject({
        status: 'connected',
        last_error: expect.stringMatching(/will be retried.*503/),
      });
      const text = `Token still fine ${Date.now()}`;
      const post = await createPost({ content: text, platforms: ['x'], scheduledAt: inSeconds(1) }, erin);
      expect((await settled(post.id, erin)).status).toBe('published');

      // Renewed without a new refresh token: the stored one stays.
      x.refreshMode = 'ok-without-refresh-token';
      const before = refreshRequests().length;
      await tokens().refreshDue();
      expect(refreshRequests().length).toBeGreaterThan(before);
      expect(refreshRequests().at(-1)!.refresh_token).toBe(firstRefreshToken);
      const row = await erinRow();
      expect(row.status).toBe('connected');
      expect(row.last_error).toBeNull();
      expect(clients.cipher.open(row.refresh_token_sealed, `integration:${row.id}:refresh`)).toBe(firstRefreshToken);

      // A definite refusal: needs reconnecting, and a publish then fails saying so.
      x.refreshMode = 'invalid-grant';
      await tokens().refreshDue();
      expect((await erinRow()).status).toBe('needs_reconnect');
      const refused = await createPost({ content: 'after refusal', platforms: ['x'], scheduledAt: inSeconds(1) }, erin);
      const failed = await settled(refused.id, erin);
      expect(failed.status).toBe('failed');
      expect(failed.attempts[0].error).toMatch(/needs to be reconnected/);
      const list = await rest('GET', `${base}/api/integrations`, undefined, erin);
      expect(list.body.data[0].status).toBe('needs_reconnect');
      x.expiresIn = 7200;
      x.refreshMode = 'ok';
    });

    it('the same job run twice at once (a redelivered job) publishes once: the claim is taken under a row lock', async () => {
      const text = `Raced ${Date.now()}`;
      const scheduledAt = inSeconds(600);
      const post = await createPost({ content: text, platforms: ['mastodon'], scheduledAt });
      const runtime = runtimeOf(platform);
      const tools = { ...runtime.integrations, storage: runtime.media.storage };
      const publisher = () =>
        new PublisherService(
          platform.subgraphs.social.orm.em.fork(),
          tools,
          runtime.queue,
          createLogger(platform.config),
        );
      const job = { postId: post.id, scheduledAt };
      const outcomes = await Promise.all([publisher().run(job), publisher().run(job)]);
      expect(outcomes.sort()).toEqual(['published', 'skipped']);
      expect(postedTexts(mastodon, text)).toBe(1);
      expect((await item(post.id)).attempts).toHaveLength(1);
      // Run again later (the job redelivered after the fact): nothing more happens.
      expect(await publisher().run(job)).toBe('skipped');
      expect(postedTexts(mastodon, text)).toBe(1);
    });

    // A second worker is a second process on the same database: PostgreSQL only (embedded PGlite
    // belongs to the one process that opened it, and `npm run worker` refuses to start on it).
    (process.env.TEST_DATABASE_URL ? it : it.skip)('two workers never publish the same post twice', async () => {
      const second = await startPublisherWorker(platform.config, createLogger(platform.config));
      try {
        const texts = Array.from({ length: 8 }, (_, i) => `Crowd ${i} ${Date.now()}`);
        const at = inSeconds(2);
        const posts = [];
        for (const text of texts)
          posts.push(await createPost({ content: text, platforms: ['mastodon'], scheduledAt: at }));
        for (const post of posts) expect((await settled(post.id)).status).toBe('published');
        await sleep(2000);
        expect(texts.map((text) => postedTexts(mastodon, text))).toEqual(texts.map(() => 1));
        const attempts = await sql(
          'select post_id, count(*)::int as n from social.publish_attempt where post_id in (?) group by post_id',
          [posts.map((p) => p.id)],
        );
        expect(attempts.map((a) => a.n)).toEqual(posts.map(() => 1));
      } finally {
        await second.close();
      }
    });

    it('counts every publish call by platform and outcome (publish_outcomes_total)', async () => {
      const { values } = await publishOutcomes.get();
      const count = (platform: string, outcome: string) =>
        values.find((value) => value.labels.platform === platform && value.labels.outcome === outcome)?.value ?? 0;
      expect(count('mastodon', 'succeeded')).toBeGreaterThan(0);
      expect(count('x', 'failed')).toBeGreaterThan(0);
      expect(new Set(values.map((value) => value.labels.platform))).toEqual(new Set(['mastodon', 'x']));
    });
  });
});
