import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  expectConditionalChanges,
  expectConditionalDelete,
  expectEntityTags,
  expectOneOfTwoWriters,
  type VersionedResource,
} from '#test/support/conditional-requests.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

describe('social conditional requests', () => {
  let platform: TestPlatform;
  let base: string;
  let alice: Record<string, string>;

  beforeAll(async () => {
    platform = await startTestPlatform();
    base = platform.urls.socialRest;
    alice = { authorization: `Bearer ${await platform.token('alice-conditional')}` };
  });
  afterAll(async () => {
    await platform?.stop();
  });

  const newPost = async (): Promise<VersionedResource> => {
    const created = await rest('POST', `${base}/api/posts`, { content: 'Versioned post' }, alice);
    expect(created.status).toBe(201);
    return {
      url: `${base}/api/posts/${created.body.id}`,
      headers: alice,
      change: { method: 'PUT', body: (content) => ({ content }), field: 'content' },
    };
  };

  /** The same post as a content item: read with its events and attempts, edited by PATCH. */
  const asContentItem = (post: VersionedResource): VersionedResource => ({
    ...post,
    url: post.url.replace('/api/posts/', '/api/content-ops/items/'),
    change: { method: 'PATCH', body: (content) => ({ content }), field: 'content' },
  });

  it('tags a post and a content item with a strong ETag that answers 304 until it changes', async () => {
    await expectEntityTags(await newPost());
    await expectEntityTags(asContentItem(await newPost()));
  });

  it('changes a post or a content item only while If-Match holds; otherwise 412 and nothing changes', async () => {
    await expectConditionalChanges(await newPost());
    await expectConditionalChanges(asContentItem(await newPost()));
  });

  it('lets exactly one of two writers holding the same ETag win', async () => {
    await expectOneOfTwoWriters(await newPost());
    await expectOneOfTwoWriters(asContentItem(await newPost()));
  });

  it('deletes a post only at its current version', async () => {
    await expectConditionalDelete(await newPost(), 204);
  });

  it('tags a brand with a strong ETag that answers 304 while it holds', async () => {
    // Another user: a second brand of alice's would make her posts name their brand.
    const carol = { authorization: `Bearer ${await platform.token('carol-conditional')}` };
    const brand = await rest('POST', `${base}/api/brands`, { name: 'Versioned brand' }, carol);
    const url = `${base}${brand.headers.get('location')}`;
    const first = await rest('GET', url, undefined, carol);
    expect(first.headers.get('etag')).toMatch(/^"\d+"$/);
    expect(first.body).toEqual(brand.body);
    const same = await rest('GET', url, undefined, { ...carol, 'if-none-match': first.headers.get('etag')! });
    expect({ status: same.status, body: same.body }).toEqual({ status: 304, body: undefined });
  });

  it('keeps the version of a post that an edit did not change', async () => {
    const post = await newPost();
    const before = await rest('GET', post.url, undefined, alice);
    const same = await rest('PUT', post.url, { content: before.body.content }, { ...alice, 'if-match': '*' });
    expect(same.status).toBe(200);
    expect(same.headers.get('etag')).toBe(before.headers.get('etag'));
  });
});
