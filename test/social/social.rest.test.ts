import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { graphql, rest, startTestPlatform, type TestPlatform } from '../support/platform.js';

describe('social publishing REST', () => {
  let platform: TestPlatform;
  let base: string;
  let alice: Record<string, string>;
  let bob: Record<string, string>;

  beforeAll(async () => {
    platform = await startTestPlatform();
    base = platform.urls.socialRest;
    alice = { authorization: `Bearer ${await platform.token('alice')}` };
    bob = { authorization: `Bearer ${await platform.token('bob')}` };
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('answers the probes', async () => {
    expect((await rest('GET', `${base}/healthz`)).status).toBe(200);
    expect((await rest('GET', `${base}/readyz`)).status).toBe(200);
    const health = await rest('GET', `${base}/health`);
    expect(health.status).toBe(200);
    expect(health.body.checks).toMatchObject({ database: 'ok', storage: 'ok' });
  });

  it('creates a post in a default brand, then reads, updates and deletes it', async () => {
    const created = await rest('POST', `${base}/api/posts`, { content: 'Hello world', platforms: ['mastodon'] }, alice);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ content: 'Hello world', platforms: ['mastodon'], mediaIds: [], scheduledAt: null, status: 'draft' });
    const brands = await rest('GET', `${base}/api/brands`, undefined, alice);
    expect(brands.body.data).toHaveLength(1);
    expect(created.body.brandId).toBe(brands.body.data[0].id);
    const id = created.body.id;
    expect((await rest('GET', `${base}/api/posts/${id}`, undefined, alice)).body.content).toBe('Hello world');
    expect((await rest('GET', `${base}/api/posts/${id}`, undefined, bob)).status).toBe(404);
    const updated = await rest('PUT', `${base}/api/posts/${id}`, { content: 'Hello again' }, alice);
    expect(updated.status).toBe(200);
    expect(updated.body.content).toBe('Hello again');
    const deleted = await rest('DELETE', `${base}/api/posts/${id}`, undefined, alice);
    expect(deleted.status).toBe(204);
    expect((await rest('GET', `${base}/api/posts/${id}`, undefined, alice)).status).toBe(404);
    const item = await rest('GET', `${base}/api/content-ops/events?contentId=${id}`, undefined, alice);
    expect(item.body.data.map((e: any) => e.type)).toEqual(['deleted', 'updated', 'created']);
  });

  it('queues, approves and rejects', async () => {
    const s = await rest('POST', `${base}/api/posts`, { content: 'Suggestion', status: 'suggested', scheduledAt: '2030-01-01T10:00:00+02:00' }, alice);
    expect(s.status).toBe(201);
    expect(s.body.scheduledAt).toBe('2030-01-01T08:00:00.000Z');
    const approved = await rest('POST', `${base}/api/content-ops/items/${s.body.id}/approve`, undefined, alice);
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('queued');
    const again = await rest('POST', `${base}/api/content-ops/items/${s.body.id}/approve`, undefined, alice);
    expect(again.status).toBe(409);
    expect(again.body.currentState).toBe('queued');
    const detail = await rest('GET', `${base}/api/content-ops/items/${s.body.id}`, undefined, alice);
    expect(detail.status).toBe(200);
    expect(detail.body.events.map((e: any) => e.type)).toEqual(['approved', 'created']);
    const daily = await rest('GET', `${base}/api/content-ops/daily?from=2029-12-31&to=2030-01-02&timezone=Europe/Berlin`, undefined, alice);
    expect(daily.status).toBe(200);
    console.log(JSON.stringify(daily.body));
  });
});
