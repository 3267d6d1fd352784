import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { FakeImageApi, TINY_PNG } from '#test/social-reach/fake-image-api.js';
import { freePort } from '#test/support/ports.js';

type Headers = Record<string, string>;
type Answer = {
  data?: Record<string, any> | null;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
};

/**
 * An owner with brands A and B, holding posts, suggestions, queued posts, audit events, campaigns
 * and media in B, and an API key with every scope limited to brand A: every read answers empty,
 * null or 404, every write naming B is refused and changes nothing, through GraphQL and REST alike.
 */
describe('an API key limited to brand A, everywhere in the social service', () => {
  let platform: TestPlatform;
  const images = new FakeImageApi();
  let owner: Headers;
  let keyA: Headers;
  let ids: Record<string, string>;
  /** Every id that belongs to brand B: none may appear in an answer to the key. */
  let brandBIds: string[];

  const gql = async (query: string, variables: Record<string, unknown>, headers: Headers): Promise<Answer> =>
    (await graphql(platform.urls.gateway, query, variables, headers)).body;
  const data = async (query: string, variables: Record<string, unknown>, headers: Headers) => {
    const answer = await gql(query, variables, headers);
    if (answer.errors) throw new Error(`${query}: ${JSON.stringify(answer.errors)}`);
    return answer.data!;
  };
  const sql = (text: string, params: unknown[] = []) =>
    platform.subgraphs.social.orm.em.fork().getConnection().execute(text, params);
  /** Every row of brand B, as stored: a refused write leaves it exactly so. */
  const brandBRows = async () =>
    JSON.stringify(
      await Promise.all(
        ['post', 'campaign', 'media_file', 'content_event', 'brand'].map((table) =>
          sql(`select * from social.${table} where ${table === 'brand' ? 'id' : 'brand_id'} = ? order by 1`, [
            ids.brandB,
          ]),
        ),
      ),
    );

  /**
   * The answer without the event of the owner's move of a post from B into A: that event belongs to
   * A (the post is there now) and its `before` names B, which the key may see as history of its own post.
   */
  const withoutMoveEvent = (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value), (_key, item: unknown) =>
      Array.isArray(item)
        ? item.filter((entry: any) => !(entry?.contentId === ids.moved && entry?.type === 'updated'))
        : item,
    );

  beforeAll(async () => {
    await images.start();
    // Signed upload URLs name the public address of the social REST service.
    const port = await freePort();
    platform = await startTestPlatform({
      SOCIAL_REST_PORT: String(port),
      SOCIAL_PUBLIC_URL: `http://127.0.0.1:${port}`,
      AI_IMAGE_API_URL: `${images.url}/v1`,
      AI_IMAGE_API_KEY: 'sk-test',
      AI_IMAGE_MODEL: 'gpt-image-1',
    });
    owner = { authorization: `Bearer ${await platform.token('olive')}` };
    const brand = async (name: string) =>
      (await data('mutation ($name: String!) { createBrand(input: { name: $name }) { id } }', { name }, owner))
        .createBrand.id as string;
    const post = async (input: Record<string, unknown>) =>
      (await data('mutation ($input: CreatePostInput!) { createPost(input: $input) { id } }', { input }, owner))
        .createPost.id as string;
    const campaign = async (brandId: string) =>
      (
        await data(
          'mutation ($input: CreateCampaignInput!) { createCampaign(input: $input) { id } }',
          { input: { brandId, name: 'Launch' } },
          owner,
        )
      ).createCampaign.id as string;
    const media = async (brandId: string) => {
      const grant = (
        await data(
          'mutation ($input: MediaUploadInput!) { requestMediaUpload(input: $input) { id uploadUrl } }',
          { input: { filename: 'pic.png', contentType: 'image/png', size: TINY_PNG.length, brandId } },
          owner,
        )
      ).requestMediaUpload;
      expect(
        (
          await fetch(grant.uploadUrl, {
            method: 'PUT',
            headers: { 'content-type': 'image/png' },
            body: new Uint8Array(TINY_PNG),
          })
        ).status,
      ).toBe(200);
      return grant.id as string;
    };
    const brandA = await brand('A');
    const brandB = await brand('B');
    const later = new Date(Date.now() + 7 * 86_400_000).toISOString();
    ids = {
      brandA,
      brandB,
      postA: await post({ brandId: brandA, content: 'in A' }),
      postB: await post({ brandId: brandB, content: 'in B' }),
      suggestionB: await post({ brandId: brandB, content: 'suggested in B', status: 'SUGGESTED' }),
      queuedB: await post({ brandId: brandB, content: 'queued in B', scheduledAt: later }),
      moved: await post({ brandId: brandB, content: 'written in B, moved to A' }),
      campaignA: await campaign(brandA),
      campaignB: await campaign(brandB),
      mediaA: await media(brandA),
      mediaB: await media(brandB),
    };
    await data(
      'mutation ($id: ID!, $input: UpdatePostInput!) { updatePost(id: $id, input: $input) { id } }',
      { id: ids.moved, input: { brandId: brandA } },
      owner,
    );
    await data(
      'mutation ($p: ID!, $c: ID) { setPostCampaign(postId: $p, campaignId: $c) { id } }',
      { p: ids.postB, c: ids.campaignB },
      owner,
    );
    await data(
      'mutation ($p: ID!, $c: ID) { setPostCampaign(postId: $p, campaignId: $c) { id } }',
      { p: ids.postA, c: ids.campaignA },
      owner,
    );
    brandBIds = [ids.brandB, ids.postB, ids.suggestionB, ids.queuedB, ids.campaignB, ids.mediaB];
    const scopes = [
      'brands.read',
      'posts.read',
      'posts.write',
      'campaigns.read',
      'campaigns.write',
      'analytics.read',
      'media.read',
      'media.write',
      'suggestions.read',
      'suggestions.write',
      'settings.read',
      'settings.write',
      'integrations.read',
      'integrations.write',
      `brand:${brandA}`,
    ];
    const key = await data(
      'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }',
      { input: { name: 'brand A', scopes } },
      owner,
    );
    keyA = { 'x-api-key': key.createApiKey.key as string };
  });

  afterAll(async () => {
    await platform?.stop();
    await images.stop();
  });

  const READS: Array<[string, string, (ids: Record<string, string>) => Record<string, unknown>]> = [
    ['posts', '{ posts(first: 100) { nodes { id brandId content } } }', () => ({})],
    [
      'posts of brand B',
      'query ($b: ID) { posts(first: 100, brandId: $b) { nodes { id } totalCount } }',
      (i) => ({ b: i.brandB }),
    ],
    ['postPage', '{ postPage(limit: 100) { items { id } } }', () => ({})],
    ['post in B', 'query ($id: ID!) { post(id: $id) { id content } }', (i) => ({ id: i.postB })],
    ['contentQueue', '{ contentQueue(first: 100) { nodes { id } } }', () => ({})],
    [
      'contentQueue of brand B',
      'query ($b: ID) { contentQueue(first: 100, brandId: $b) { nodes { id } } }',
      (i) => ({ b: i.brandB }),
    ],
    ['suggestions', '{ suggestions(first: 100) { nodes { id } } }', () => ({})],
    [
      'suggestions of brand B',
      'query ($b: ID) { suggestions(first: 100, brandId: $b) { nodes { id } } }',
      (i) => ({ b: i.brandB }),
    ],
    [
      'contentItem in B',
      'query ($id: ID!) { contentItem(id: $id) { id events { id } } }',
      (i) => ({ id: i.suggestionB }),
    ],
    ['contentEvents', '{ contentEvents(first: 100) { nodes { id contentId brandId } } }', () => ({})],
    [
      'contentEvents of a post in B',
      'query ($id: ID) { contentEvents(first: 100, contentId: $id) { nodes { id } totalCount } }',
      (i) => ({ id: i.postB }),
    ],
    [
      'events of the post moved from B to A',
      'query ($id: ID!) { post(id: $id) { events { type brandId } } }',
      (i) => ({ id: i.moved }),
    ],
    [
      'contentDaily of brand B',
      'query ($b: ID) { contentDaily(brandId: $b) { days { total } } }',
      (i) => ({ b: i.brandB }),
    ],
    ['campaigns', '{ campaigns(first: 100) { nodes { id posts { id } } } }', () => ({})],
    [
      'campaigns of brand B',
      'query ($b: ID) { campaigns(first: 100, brandId: $b) { nodes { id } } }',
      (i) => ({ b: i.brandB }),
    ],
    ['campaign in B', 'query ($id: ID!) { campaign(id: $id) { id posts { id } } }', (i) => ({ id: i.campaignB })],
    [
      'posts of campaign A',
      'query ($id: ID!) { campaign(id: $id) { posts { id brand { id } } brand { id } } }',
      (i) => ({ id: i.campaignA }),
    ],
    ['brands', '{ brands(first: 100) { nodes { id name } } }', () => ({})],
    ['brandSettings of B', 'query ($b: ID!) { brandSettings(brandId: $b) { timezone } }', (i) => ({ b: i.brandB })],
    ['media', '{ media(first: 100) { nodes { id url } } }', () => ({})],
    ['mediaPage', '{ mediaPage(limit: 100) { items { id url } } }', () => ({})],
    ['mediaFile in B', 'query ($id: ID!) { mediaFile(id: $id) { id url } }', (i) => ({ id: i.mediaB })],
  ];

  it.each(READS)('reads nothing of brand B: %s', async (_name, query, variables) => {
    const answer = await gql(query, variables(ids), keyA);
    const text = JSON.stringify(withoutMoveEvent(answer));
    for (const id of brandBIds) expect(text).not.toContain(id);
    for (const error of answer.errors ?? []) expect(['NOT_FOUND']).toContain(error.extensions?.code);
    // The moved post's creation happened in B: only its move into A (an event of A) is in reach.
    if (_name.startsWith('events of the post moved'))
      expect(answer.data!.post.events).toEqual([{ type: 'UPDATED', brandId: ids.brandA }]);
    if (_name === 'posts of campaign A')
      expect(answer.data!.campaign).toEqual({
        posts: [{ id: ids.postA, brand: { id: ids.brandA } }],
        brand: { id: ids.brandA },
      });
  });

  it('counts only brand A in the daily rollups', async () => {
    const totalOf = async (headers: Headers, brandId?: string) =>
      (
        (await data('query ($b: ID) { contentDaily(brandId: $b) { days { total } } }', { b: brandId ?? null }, headers))
          .contentDaily.days as Array<{ total: number }>
      ).reduce((sum, day) => sum + day.total, 0);
    const inA = await totalOf(owner, ids.brandA);
    expect(inA).toBeGreaterThan(0);
    expect(await totalOf(keyA)).toBe(inA);
    expect(await totalOf(owner)).toBeGreaterThan(inA);
  });

  const WRITES: Array<[string, string, (ids: Record<string, string>) => Record<string, unknown>]> = [
    [
      'createPost in B',
      'mutation ($b: ID) { createPost(input: { brandId: $b, content: "x" }) { id } }',
      (i) => ({ b: i.brandB }),
    ],
    [
      'createPost in A with media of B',
      'mutation ($b: ID, $m: [ID!]) { createPost(input: { brandId: $b, content: "x", mediaIds: $m }) { id } }',
      (i) => ({ b: i.brandA, m: [i.mediaB] }),
    ],
    [
      'updatePost in B',
      'mutation ($id: ID!) { updatePost(id: $id, input: { content: "changed" }) { id } }',
      (i) => ({ id: i.postB }),
    ],
    [
      'updatePost from A into B',
      'mutation ($id: ID!, $b: ID) { updatePost(id: $id, input: { brandId: $b }) { id } }',
      (i) => ({ id: i.postA, b: i.brandB }),
    ],
    [
      'updatePost in A with media of B',
      'mutation ($id: ID!, $m: [ID!]) { updatePost(id: $id, input: { mediaIds: $m }) { id } }',
      (i) => ({ id: i.postA, m: [i.mediaB] }),
    ],
    ['deletePost in B', 'mutation ($id: ID!) { deletePost(id: $id) { deletedId } }', (i) => ({ id: i.postB })],
    [
      'editContentItem in B',
      'mutation ($id: ID!) { editContentItem(id: $id, input: { content: "changed" }) { id } }',
      (i) => ({ id: i.suggestionB }),
    ],
    [
      'approveContentItem in B',
      'mutation ($id: ID!) { approveContentItem(id: $id) { id } }',
      (i) => ({ id: i.suggestionB }),
    ],
    [
      'rejectContentItem in B',
      'mutation ($id: ID!) { rejectContentItem(id: $id) { id } }',
      (i) => ({ id: i.suggestionB }),
    ],
    [
      'rescheduleContentItem in B',
      'mutation ($id: ID!, $at: DateTimeISO) { rescheduleContentItem(id: $id, scheduledAt: $at) { id } }',
      (i) => ({ id: i.queuedB, at: new Date(Date.now() + 86_400_000).toISOString() }),
    ],
    ['retryContentItem in B', 'mutation ($id: ID!) { retryContentItem(id: $id) { id } }', (i) => ({ id: i.queuedB })],
    [
      'createCampaign in B',
      'mutation ($b: ID) { createCampaign(input: { brandId: $b, name: "x" }) { id } }',
      (i) => ({ b: i.brandB }),
    ],
    [
      'updateCampaign in B',
      'mutation ($id: ID!) { updateCampaign(id: $id, input: { name: "changed" }) { id } }',
      (i) => ({ id: i.campaignB }),
    ],
    [
      'deleteCampaign in B',
      'mutation ($id: ID!) { deleteCampaign(id: $id) { deletedId } }',
      (i) => ({ id: i.campaignB }),
    ],
    [
      'setPostCampaign of a post in B',
      'mutation ($p: ID!) { setPostCampaign(postId: $p, campaignId: null) { id } }',
      (i) => ({ p: i.postB }),
    ],
    [
      'setPostCampaign into a campaign of B',
      'mutation ($p: ID!, $c: ID) { setPostCampaign(postId: $p, campaignId: $c) { id } }',
      (i) => ({ p: i.postA, c: i.campaignB }),
    ],
    [
      'updateBrandSettings of B',
      'mutation ($b: ID!) { updateBrandSettings(brandId: $b, input: { timezone: "Europe/Paris" }) { timezone } }',
      (i) => ({ b: i.brandB }),
    ],
    [
      'requestMediaUpload into B',
      'mutation ($b: ID) { requestMediaUpload(input: { filename: "a.png", contentType: "image/png", size: 10, brandId: $b }) { id } }',
      (i) => ({ b: i.brandB }),
    ],
    [
      'generateImage into B',
      'mutation ($b: ID) { generateImage(input: { prompt: "a red door", brandId: $b }) { id } }',
      (i) => ({ b: i.brandB }),
    ],
  ];

  it.each(WRITES)('refuses a write naming brand B, changing nothing: %s', async (_name, query, variables) => {
    const before = await brandBRows();
    const generated = images.requests.length;
    const answer = await gql(query, variables(ids), keyA);
    expect(answer.errors?.length).toBeGreaterThan(0);
    expect(['NOT_FOUND', 'BAD_USER_INPUT', 'FORBIDDEN']).toContain(answer.errors![0].extensions?.code);
    expect(await brandBRows()).toBe(before);
    expect(images.requests.length).toBe(generated);
  });

  // Every row has its four entries: jest reads a test function with more parameters than the row as one wanting `done`.
  const REST_CALLS: Array<[string, string, (ids: Record<string, string>) => string, unknown]> = [
    ['GET', 'queue', () => '/api/content-ops/queue?limit=100', undefined],
    ['GET', 'queue of brand B', (i) => `/api/content-ops/queue?brandId=${i.brandB}`, undefined],
    ['GET', 'events', () => '/api/content-ops/events?limit=100', undefined],
    ['GET', 'events of a post in B', (i) => `/api/content-ops/events?contentId=${i.postB}`, undefined],
    ['GET', 'daily of brand B', (i) => `/api/content-ops/daily?brandId=${i.brandB}`, undefined],
    ['GET', 'item in B', (i) => `/api/content-ops/items/${i.suggestionB}`, undefined],
    ['PATCH', 'edit in B', (i) => `/api/content-ops/items/${i.suggestionB}`, { content: 'changed' }],
    ['POST', 'approve in B', (i) => `/api/content-ops/items/${i.suggestionB}/approve`, undefined],
    ['POST', 'reject in B', (i) => `/api/content-ops/items/${i.suggestionB}/reject`, undefined],
    [
      'POST',
      'reschedule in B',
      (i) => `/api/content-ops/items/${i.queuedB}/reschedule`,
      { scheduledAt: new Date(Date.now() + 86_400_000).toISOString() },
    ],
    ['POST', 'retry in B', (i) => `/api/content-ops/items/${i.queuedB}/retry`, undefined],
  ];

  it.each(REST_CALLS)('REST %s %s: nothing of brand B read or changed', async (method, _name, path, body) => {
    const before = await brandBRows();
    const answer = await rest(method, `${platform.urls.socialRest}${path(ids)}`, body, keyA);
    // A problem's `instance` repeats the path the caller sent, with the id the caller already had.
    const { instance: _path, ...problem } = (answer.body ?? {}) as Record<string, unknown>;
    const text = JSON.stringify(withoutMoveEvent(problem));
    for (const id of brandBIds) expect(text).not.toContain(id);
    if (method === 'GET' && !path(ids).includes('/items/')) expect(answer.status).toBe(200);
    else expect(answer.status).toBe(404);
    expect(await brandBRows()).toBe(before);
  });
});

describe('fields that hand out another resource need its scope', () => {
  let platform: TestPlatform;
  let owner: Headers;
  let ids: Record<string, string>;
  const gql = async (query: string, variables: Record<string, unknown>, headers: Headers): Promise<Answer> =>
    (await graphql(platform.urls.gateway, query, variables, headers)).body;
  const bearer = async (scopes: string[]) => ({ authorization: `Bearer ${await platform.token('pat', scopes)}` });
  const codeOf = (answer: Answer) => answer.errors?.[0]?.extensions?.code;

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = { authorization: `Bearer ${await platform.token('pat')}` };
    const brandId = (await gql('mutation { createBrand(input: { name: "Only" }) { id } }', {}, owner)).data!.createBrand
      .id as string;
    const postId = (
      await gql(
        'mutation ($b: ID) { createPost(input: { brandId: $b, content: "hello" }) { id } }',
        { b: brandId },
        owner,
      )
    ).data!.createPost.id as string;
    const campaignId = (
      await gql('mutation ($b: ID) { createCampaign(input: { brandId: $b, name: "C" }) { id } }', { b: brandId }, owner)
    ).data!.createCampaign.id as string;
    await gql(
      'mutation ($p: ID!, $c: ID) { setPostCampaign(postId: $p, campaignId: $c) { id } }',
      { p: postId, c: campaignId },
      owner,
    );
    ids = { brandId, postId, campaignId };
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('Campaign.posts needs posts.read: post content, audit snapshots and attempts stay behind it', async () => {
    const query =
      'query ($id: ID!) { campaign(id: $id) { name posts { content events { after } publishAttempts { id } } } }';
    expect(codeOf(await gql(query, { id: ids.campaignId }, await bearer(['campaigns.read'])))).toBe('FORBIDDEN');
    const both = await gql(query, { id: ids.campaignId }, await bearer(['campaigns.read', 'posts.read']));
    expect(both.data!.campaign.posts[0].content).toBe('hello');
  });

  it('Post.brand and Campaign.brand need brands.read', async () => {
    const postBrand = await gql(
      'query ($id: ID!) { post(id: $id) { content brand { name } } }',
      { id: ids.postId },
      await bearer(['posts.read']),
    );
    expect(codeOf(postBrand)).toBe('FORBIDDEN');
    expect(postBrand.data!.post).toEqual({ content: 'hello', brand: null });
    const campaignBrand = await gql(
      'query ($id: ID!) { campaign(id: $id) { brand { name } } }',
      { id: ids.campaignId },
      await bearer(['campaigns.read']),
    );
    expect(codeOf(campaignBrand)).toBe('FORBIDDEN');
    const allowed = await gql(
      'query ($id: ID!) { post(id: $id) { brand { name } } }',
      { id: ids.postId },
      await bearer(['posts.read', 'brands.read']),
    );
    expect(allowed.data!.post.brand).toEqual({ name: 'Only' });
  });

  it('setPostCampaign changes a post: it needs posts.write besides campaigns.write', async () => {
    const move = 'mutation ($p: ID!) { setPostCampaign(postId: $p, campaignId: null) { id } }';
    expect(codeOf(await gql(move, { p: ids.postId }, await bearer(['campaigns.write'])))).toBe('FORBIDDEN');
    expect(codeOf(await gql(move, { p: ids.postId }, await bearer(['posts.write'])))).toBe('FORBIDDEN');
    expect(
      (await gql(move, { p: ids.postId }, await bearer(['campaigns.write', 'posts.write']))).data!.setPostCampaign.id,
    ).toBe(ids.postId);
  });
});
