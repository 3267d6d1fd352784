import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { linksOf } from '#test/support/links.js';
import { FakeImageApi } from '#test/social-reach/fake-image-api.js';

describe('social REST headers', () => {
  let platform: TestPlatform;
  let base: string;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  const images = new FakeImageApi();

  beforeAll(async () => {
    await images.start();
    platform = await startTestPlatform({
      AI_IMAGE_API_URL: `${images.url}/v1`,
      AI_IMAGE_API_KEY: 'sk-test',
      AI_IMAGE_MODEL: 'gpt-image-1',
      AI_IMAGE_RATE_LIMIT: '2',
    });
    base = platform.urls.socialRest;
    alice = { authorization: `Bearer ${await platform.token('alice-headers')}` };
    bob = { authorization: `Bearer ${await platform.token('bob-headers')}` };
  });
  afterAll(async () => {
    await platform?.stop();
    await images.stop();
  });

  it('answers a 201 with the Location of what it created', async () => {
    const brand = await rest('POST', `${base}/api/brands`, { name: 'Located brand' }, alice);
    expect(brand.status).toBe(201);
    expect(brand.headers.get('location')).toBe(`/api/brands/${brand.body.id}`);
    // Every Location leads to what was created; another user's brand is not found there.
    const located = await rest('GET', `${base}${brand.headers.get('location')}`, undefined, alice);
    expect({ status: located.status, body: located.body }).toEqual({ status: 200, body: brand.body });
    expect((await rest('GET', `${base}${brand.headers.get('location')}`, undefined, bob)).status).toBe(404);
    const post = await rest('POST', `${base}/api/posts`, { content: 'Located post', brandId: brand.body.id }, alice);
    expect(post.status).toBe(201);
    expect(post.headers.get('location')).toBe(`/api/posts/${post.body.id}`);
    expect((await rest('GET', `${base}${post.headers.get('location')}`, undefined, alice)).body.id).toBe(post.body.id);
  });

  it('links the pages of a list, and the next items of a cursor list', async () => {
    for (let i = 0; i < 3; i += 1) {
      expect((await rest('POST', `${base}/api/posts`, { content: `Paged ${i}` }, alice)).status).toBe(201);
    }
    const posts = await rest('GET', `${base}/api/posts?limit=2&status=draft`, undefined, alice);
    expect(posts.status).toBe(200);
    const pages = Math.ceil(posts.body.total / 2);
    expect(pages).toBeGreaterThan(1);
    expect(linksOf(posts.headers.get('link'))).toEqual({
      first: '/api/posts?limit=2&status=draft&page=1',
      next: '/api/posts?limit=2&status=draft&page=2',
      last: `/api/posts?limit=2&status=draft&page=${pages}`,
    });

    const events = await rest('GET', `${base}/api/content-ops/events?limit=1&type=created`, undefined, alice);
    expect(events.status).toBe(200);
    expect(events.body.nextCursor).toEqual(expect.any(String));
    const next = linksOf(events.headers.get('link'));
    expect(Object.keys(next)).toEqual(['next']);
    const following = await rest('GET', `${base}${next.next}`, undefined, alice);
    expect(following.body.data[0].id).not.toBe(events.body.data[0].id);
    expect(following.body.data[0].type).toBe('created');
  });

  it('states the review limit, counted here, on every answer, and Retry-After with it on a 429', async () => {
    const first = await rest('GET', `${base}/api/review/no-such-token`);
    expect(first.status).toBe(404);
    expect(first.headers.get('ratelimit-policy')).toBe('"social-review-client";q=60;w=60');
    expect(first.headers.get('ratelimit')).toMatch(/^"social-review-client";r=59;t=\d+$/);
    const second = await rest('GET', `${base}/api/review/no-such-token`);
    expect(second.headers.get('ratelimit')).toMatch(/^"social-review-client";r=58;t=\d+$/);
    let refused = second;
    for (let i = 0; i < 60 && refused.status !== 429; i += 1) {
      refused = await rest('GET', `${base}/api/review/no-such-token`);
    }
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(/^"social-review-client";r=0;t=[1-9]\d*$/);
    expect(refused.headers.get('ratelimit-policy')).toBe('"social-review-client";q=60;w=60');
  });

  it('states the AI image limit, counted in the subgraph, on every answer, and Retry-After on a 429', async () => {
    const generate = () => rest('POST', `${base}/api/ai/generate-image`, { prompt: 'a lighthouse' }, alice);
    const first = await generate();
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toBe('"ai-image";q=2;w=60');
    expect(first.headers.get('ratelimit')).toMatch(/^"ai-image";r=1;t=\d+$/);
    expect((await generate()).headers.get('ratelimit')).toMatch(/^"ai-image";r=0;t=\d+$/);
    const refused = await generate();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(/^"ai-image";r=0;t=[1-9]\d*$/);
    expect(Object.keys(refused.body).sort()).toEqual(['code', 'detail', 'instance', 'status', 'title', 'type']);
  });

  it('answers a 401 with WWW-Authenticate: Bearer, naming a refused token invalid_token', async () => {
    const missing = await rest('GET', `${base}/api/posts`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    const forged = await rest('GET', `${base}/api/posts`, undefined, { authorization: 'Bearer not.a.token' });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(forged.body).toEqual(missing.body);
  });
});
