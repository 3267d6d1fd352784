import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { FakePlatform } from './fake-platforms.js';
import { freePort } from '#test/support/ports.js';
import { browserOf, sleep } from './helpers.js';

/**
 * The same service on embedded PGlite (no DATABASE_URL): pg-boss runs over the service's own
 * PGlite connection, so connecting, publishing at the scheduled time and cancelling on reschedule
 * work with no server at all. Also: AI images without a configured provider answer 503.
 */
describe('social reach on embedded PGlite', () => {
  let platform: TestPlatform;
  let base: string;
  let alice: Record<string, string>;
  const mastodon = new FakePlatform('mastodon', 'masto-client', 'masto-secret');

  beforeAll(async () => {
    await mastodon.start();
    const port = await freePort();
    platform = await startTestPlatform(
      {
        SOCIAL_REST_PORT: String(port),
        MASTODON_CLIENT_ID: mastodon.clientId,
        MASTODON_CLIENT_SECRET: mastodon.clientSecret,
        MASTODON_BASE_URL: mastodon.url,
      },
      { embedded: true },
    );
    base = platform.urls.socialRest;
    alice = { authorization: `Bearer ${await platform.token('alice')}` };
  });

  afterAll(async () => {
    await platform?.stop();
    await mastodon.stop();
  });

  it('answers 503 saying image generation is not configured', async () => {
    const response = await rest('POST', `${base}/api/ai/generate-image`, { prompt: 'a boat' }, alice);
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(response.body.detail).toMatch(/not configured/);
  });

  it('reports the job queue in /health', async () => {
    const health = await rest('GET', `${base}/health`);
    expect(health.status).toBe(200);
    expect(health.body.checks.jobs).toBe('ok');
  });

  it('offers only the configured platforms', async () => {
    const list = await rest('GET', `${base}/api/integrations`, undefined, alice);
    expect(list.body.available).toEqual(['mastodon']);
    expect((await rest('GET', `${base}/api/integrations/x/connect`, undefined, alice)).status).toBe(404);
  });

  it('connects, publishes at the scheduled time, and a moved post does not go out at the old time', async () => {
    const start = await rest('GET', `${base}/api/integrations/mastodon/connect`, undefined, alice);
    const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    // The callback address defaults to http://localhost:<SOCIAL_REST_PORT>.
    expect(authorize.headers.get('location')).toMatch(
      new RegExp(`^http://localhost:${new URL(base).port}/api/integrations/mastodon/callback\\?`),
    );
    const callback = await rest('GET', authorize.headers.get('location')!, undefined, browserOf(start));
    expect(callback.status).toBe(302);

    const at = new Date(Date.now() + 2000).toISOString();
    const kept = await rest(
      'POST',
      `${base}/api/posts`,
      { content: 'embedded hello', platforms: ['mastodon'], scheduledAt: at },
      alice,
    );
    const moved = await rest(
      'POST',
      `${base}/api/posts`,
      { content: 'embedded moved', platforms: ['mastodon'], scheduledAt: at },
      alice,
    );
    expect([kept.status, moved.status]).toEqual([201, 201]);
    const later = new Date(Date.now() + 120_000).toISOString();
    expect((await rest('PUT', `${base}/api/posts/${moved.body.id}`, { scheduledAt: later }, alice)).status).toBe(200);

    const deadline = Date.now() + 20_000;
    let status = '';
    while (Date.now() < deadline) {
      status = (await rest('GET', `${base}/api/content-ops/items/${kept.body.id}`, undefined, alice)).body.status;
      if (status === 'published' || status === 'failed') break;
      await sleep(250);
    }
    expect(status).toBe('published');
    await sleep(1500);
    expect(mastodon.posts.map((p) => p.text)).toEqual(['embedded hello']);
    expect((await rest('GET', `${base}/api/content-ops/items/${moved.body.id}`, undefined, alice)).body.status).toBe(
      'queued',
    );
  });
});
