import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { stripVTControlCharacters } from 'node:util';
import type { FormattedExecutionResult } from 'graphql';
import { createClient } from 'graphql-sse';
import { startSocialSubgraph } from '#subgraphs/social/index.js';
import type { SocialRuntime } from '#subgraphs/social/social.runtime.js';
import { reader, startTestSubgraph, type TestSubgraph } from '#test/support/subgraph.js';

const FOLLOW = `subscription ($after: String, $brandIds: [ID!]) {
  contentEvents(after: $after, brandIds: $brandIds) { id cursor type contentId brandId post { id content } }
}`;

const HISTORY = `query ($first: Int, $after: String, $last: Int, $brandIds: [ID!], $order: ContentEventOrder) {
  contentEvents(first: $first, after: $after, last: $last, brandIds: $brandIds, order: $order) {
    edges { cursor node { id cursor type contentId brandId post { id content } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

const kinds = process.env.TEST_DATABASE_URL ? (['postgresql', 'pglite'] as const) : (['pglite'] as const);

describe.each(kinds)('contentEvents subscription on %s', (kind) => {
  let social: TestSubgraph<SocialRuntime>;
  let owner: Record<string, string>;
  let brandA: string;
  let brandB: string;
  const statements: string[] = [];

  const history = async (variables: Record<string, unknown>, headers = owner) =>
    (await social.run(HISTORY, { order: 'OLDEST_FIRST', ...variables }, headers)).contentEvents;
  /**
   * The newest `count` events, oldest first, once the last is `contentId`'s: an event committed behind
   * a transaction still running (another suite's, on a shared server) is read once that one ends.
   */
  const newest = async (count: number, contentId: string, headers = owner) => {
    for (let tries = 0; ; tries++) {
      const page = await history({ last: count }, headers);
      if (page.edges.at(-1)?.node.contentId === contentId || tries === 40) return page;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const contentIdsOf = (page: any): string[] => page.edges.map((edge: any) => edge.node.contentId);

  const createPost = async (brandId: string, content: string, headers = owner): Promise<string> =>
    (
      await social.run(
        'mutation ($input: CreatePostInput!) { createPost(input: $input) { id } }',
        { input: { brandId, content } },
        headers,
      )
    ).createPost.id;
  const follow = (variables: Record<string, unknown>, headers = owner) =>
    social.subgraph.local.subscribe({ query: FOLLOW, variables }, { headers });
  const eventOf = (result: FormattedExecutionResult | 'ended') => {
    if (result === 'ended' || result.errors) throw new Error(JSON.stringify(result));
    return (result.data as any).contentEvents;
  };

  beforeAll(async () => {
    social = await startTestSubgraph(startSocialSubgraph, {
      embedded: kind === 'pglite',
      onQuery: (sql) => statements.push(stripVTControlCharacters(sql)),
    });
    owner = await social.bearer('owner-1');
    brandA = (await social.run('mutation { createBrand(input: { name: "A" }) { id } }', {}, owner)).createBrand.id;
    brandB = (await social.run('mutation { createBrand(input: { name: "B" }) { id } }', {}, owner)).createBrand.id;
  }, 60_000);
  afterAll(() => social?.stop());

  it('starts at the present and delivers a new event with its post, in process', async () => {
    await createPost(brandA, 'before');
    const stream = follow({});
    const events = reader(stream);
    expect(await events.quietFor(300)).toBe(true);
    const id = await createPost(brandA, 'live');
    const event = eventOf(await events.next());
    expect(event).toMatchObject({ type: 'CREATED', contentId: id, brandId: brandA, post: { id, content: 'live' } });
    expect(typeof event.cursor).toBe('string');
    await stream.return?.();
  });

  it('resumes after a cursor: every later event, oldest first, none twice, then live', async () => {
    const first = follow({});
    const firstEvents = reader(first);
    await firstEvents.quietFor(100);
    const ids = [await createPost(brandA, 'r1'), await createPost(brandB, 'r2'), await createPost(brandA, 'r3')];
    const seen = [eventOf(await firstEvents.next()), eventOf(await firstEvents.next())];
    await first.return?.();
    expect(seen.map((event) => event.contentId)).toEqual(ids.slice(0, 2));

    const resumed = follow({ after: seen[0].cursor });
    const resumedEvents = reader(resumed);
    expect(eventOf(await resumedEvents.next()).contentId).toBe(ids[1]);
    expect(eventOf(await resumedEvents.next()).contentId).toBe(ids[2]);
    const live = await createPost(brandB, 'r4');
    expect(eventOf(await resumedEvents.next()).contentId).toBe(live);
    expect(await resumedEvents.quietFor(300)).toBe(true);
    await resumed.return?.();
  });

  it('reads the history with contentEvents(order: OLDEST_FIRST), then follows from its last cursor: none missed, none twice', async () => {
    const ids = [await createPost(brandA, 'h1'), await createPost(brandB, 'h2'), await createPost(brandA, 'h3')];
    const page = await newest(3, ids[2]);
    expect(page.edges.map((edge: any) => [edge.node.type, edge.node.contentId, edge.node.post.content])).toEqual([
      ['CREATED', ids[0], 'h1'],
      ['CREATED', ids[1], 'h2'],
      ['CREATED', ids[2], 'h3'],
    ]);
    for (const edge of page.edges) expect(edge.cursor).toBe(edge.node.cursor);
    expect(contentIdsOf(await history({ after: page.edges[0].cursor, brandIds: [brandA] }))).toEqual([ids[2]]);

    // The default order is as it was: newest first, with cursors of that list only.
    const legacy = (await social.run(HISTORY, { first: 3 }, owner)).contentEvents;
    expect(contentIdsOf(legacy)).toEqual([...ids].reverse());
    expect(legacy.edges[0].cursor).not.toBe(legacy.edges[0].node.cursor);

    const last = page.pageInfo.endCursor as string;
    const stream = follow({ after: last });
    const events = reader(stream);
    expect(await events.quietFor(300)).toBe(true);
    const later = await createPost(brandB, 'h4');
    expect(eventOf(await events.next())).toMatchObject({ type: 'CREATED', contentId: later });
    expect(await events.quietFor(300)).toBe(true);
    await stream.return?.();
    expect(contentIdsOf(await history({ after: last }))).toEqual([later]);
  });

  it('reads a page of contentEvents oldest first and its posts in a fixed number of statements', async () => {
    for (const content of ['s1', 's2', 's3', 's4', 's5']) await createPost(brandA, content);
    statements.length = 0;
    const page = await history({ last: 5 });
    expect(page.edges).toHaveLength(5);
    // The page (the caller's own events), then every post it names at once.
    expect(statements).toEqual([
      expect.stringMatching(
        /^\[query\] select e\.\*, .* from "social"\."content_event" as e\s+where .* and \(e\.owner_id = /,
      ),
      expect.stringMatching(/from "social"\."post"/),
    ]);
  });

  it('reads oldest first only the brands an API key reaches, and refuses another brand or an after that is no cursor', async () => {
    const made = await social.run(
      'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }',
      { input: { name: 'history of a', scopes: ['posts.read', `brand:${brandA}`] } },
      owner,
    );
    const key = { 'x-api-key': made.createApiKey.key as string };
    const hidden = await createPost(brandB, 'not for the key');
    const seen = await createPost(brandA, 'for the key');
    const page = await newest(100, seen, key);
    expect(page.edges.map((edge: any) => edge.node.brandId)).toEqual(page.edges.map(() => brandA));
    expect(contentIdsOf(page)).not.toContain(hidden);

    const answer = (variables: Record<string, unknown>, headers = owner) =>
      social.subgraph.local.execute(
        { query: HISTORY, variables: { order: 'OLDEST_FIRST', ...variables } },
        { headers },
      );
    expect((await answer({ brandIds: [brandB] }, key)).errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
    const refused = await answer({ after: 'not-a-cursor' });
    expect(refused.errors?.[0]).toMatchObject({
      extensions: { code: 'BAD_USER_INPUT' },
      message: expect.stringContaining('after'),
    });
    // A newest-first cursor is no cursor of the stream's order, and the other way round.
    const newestFirst = (await social.run(HISTORY, { first: 1 }, owner)).contentEvents.pageInfo.endCursor;
    expect((await answer({ after: newestFirst })).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    const oldestFirst = page.pageInfo.endCursor;
    const crossed = await social.subgraph.local.execute(
      { query: HISTORY, variables: { after: oldestFirst } },
      { headers: owner },
    );
    expect(crossed.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('refuses an after that is no cursor, naming after', async () => {
    const events = reader(follow({ after: 'not-a-cursor' }));
    const refused = await events.next();
    expect(refused).not.toBe('ended');
    expect((refused as FormattedExecutionResult).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect((refused as FormattedExecutionResult).errors?.[0]?.message).toContain('after');
    expect(await events.next()).toBe('ended');
  });

  it('an API key limited to one brand sees only that brand, and is refused another at subscribe', async () => {
    const made = await social.run(
      'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }',
      { input: { name: 'a only', scopes: ['posts.read', `brand:${brandA}`] } },
      owner,
    );
    const key = { 'x-api-key': made.createApiKey.key as string };
    const refused = await reader(follow({ brandIds: [brandB] }, key)).next();
    expect((refused as FormattedExecutionResult).errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });

    const stream = follow({}, key);
    const events = reader(stream);
    await events.quietFor(100);
    await createPost(brandB, 'hidden');
    const visible = await createPost(brandA, 'visible');
    expect(eventOf(await events.next()).contentId).toBe(visible);
    await stream.return?.();
  });

  it('refuses a caller without posts.read at subscribe, and anyone anonymous', async () => {
    const noScope = await social.bearer('owner-1', ['brands.read']);
    const forbidden = await reader(follow({}, noScope)).next();
    expect((forbidden as FormattedExecutionResult).errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
    const anonymous = await reader(follow({}, {})).next();
    expect((anonymous as FormattedExecutionResult).errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('ends the stream with UNAUTHENTICATED once the bearer token expires', async () => {
    const shortLived = await social.bearer('owner-1', undefined, undefined, '2s');
    const events = reader(follow({}, shortLived), 6000);
    const ended = await events.next();
    expect((ended as FormattedExecutionResult).errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(await events.next()).toBe('ended');
  });

  it('ends the stream with UNAUTHENTICATED at the next event once its API key is revoked', async () => {
    const made = await social.run(
      'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key apiKey { id } } }',
      { input: { name: 'revoked', scopes: ['posts.read', 'brand:*'] } },
      owner,
    );
    const stream = follow({}, { 'x-api-key': made.createApiKey.key as string });
    const events = reader(stream);
    await events.quietFor(100);
    await social.run(
      'mutation ($id: ID!) { revokeApiKey(id: $id) { id } }',
      { id: made.createApiKey.apiKey.id },
      owner,
    );
    await createPost(brandA, 'after revocation');
    const ended = await events.next();
    expect((ended as FormattedExecutionResult).errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('serves the subscription over GraphQL over SSE on the subgraph port', async () => {
    const client = createClient({ url: social.subgraph.url, headers: owner, retryAttempts: 0 });
    const received: any[] = [];
    let resolveFirst!: () => void;
    const first = new Promise<void>((resolve) => (resolveFirst = resolve));
    const stop = client.subscribe(
      { query: FOLLOW, variables: {} },
      {
        next: (result) => {
          received.push(result);
          resolveFirst();
        },
        error: () => undefined,
        complete: () => undefined,
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const id = await createPost(brandB, 'over sse');
    await first;
    expect(received[0].data.contentEvents).toMatchObject({ contentId: id, type: 'CREATED' });
    stop();
    client.dispose();
  });

  // One process holds an embedded DATA_DIR: two instances share PostgreSQL only.
  (kind === 'postgresql' ? it : it.skip)(
    'reaches a subscriber of another instance on the same database within a second',
    async () => {
      const other = await social.another();
      const stream = other.local.subscribe({ query: FOLLOW, variables: {} }, { headers: owner });
      const events = reader(stream, 1000);
      await events.quietFor(200);
      const id = await createPost(brandA, 'across instances');
      expect(eventOf(await events.next()).contentId).toBe(id);
      await stream.return?.();
    },
  );
});
