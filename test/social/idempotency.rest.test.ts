import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

describe('social Idempotency-Key', () => {
  let platform: TestPlatform;
  let base: string;
  let alice: Record<string, string>;
  let bob: Record<string, string>;

  beforeAll(async () => {
    platform = await startTestPlatform();
    base = platform.urls.socialRest;
    alice = { authorization: `Bearer ${await platform.token('alice-idempotent')}` };
    bob = { authorization: `Bearer ${await platform.token('bob-idempotent')}` };
  });
  afterAll(async () => {
    await platform?.stop();
  });

  const postsOf = async (headers: Record<string, string>, content: string) =>
    (await rest('GET', `${base}/api/posts?limit=100`, undefined, headers)).body.data.filter(
      (post: { content: string }) => post.content === content,
    );

  it('creates a post once per key of a caller, and answers the same again', async () => {
    const key = randomUUID();
    const content = `Once ${key}`;
    const send = (headers: Record<string, string>) =>
      rest('POST', `${base}/api/posts`, { content }, { ...headers, 'idempotency-key': key });
    const first = await send(alice);
    expect(first.status).toBe(201);
    const again = await send(alice);
    expect({ status: again.status, body: again.body, replayed: again.headers.get('idempotent-replayed') }).toEqual({
      status: 201,
      body: first.body,
      replayed: 'true',
    });
    expect(await postsOf(alice, content)).toHaveLength(1);

    // The key is the caller's own: another caller's request under it is a request of its own.
    const bobs = await send(bob);
    expect(bobs.status).toBe(201);
    expect(bobs.headers.get('idempotent-replayed')).toBeNull();
    expect(bobs.body.id).not.toBe(first.body.id);
  });

  it('refuses the key of one request for another route of the same caller', async () => {
    const key = randomUUID();
    const post = await rest(
      'POST',
      `${base}/api/posts`,
      { content: `Keyed ${key}` },
      { ...alice, 'idempotency-key': key },
    );
    expect(post.status).toBe(201);
    const brand = await rest(
      'POST',
      `${base}/api/brands`,
      { name: `Keyed ${key}` },
      { ...alice, 'idempotency-key': key },
    );
    expect(brand.status).toBe(422);
    expect(brand.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
  });
});
