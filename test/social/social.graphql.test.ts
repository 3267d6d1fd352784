import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  buildClientSchema,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
  type IntrospectionQuery,
  getIntrospectionQuery,
} from 'graphql';
import { socialRules } from '#subgraphs/social/social.rules.js';
import { SOCIAL_SCOPES } from '#subgraphs/social/access/scopes.js';
import { graphql, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

/** The scope of each social operation, as the project's scope table decides it: the test fails when a rule drifts from it. */
const SCOPE_TABLE: Record<string, string[]> = {
  'posts.read': [
    'Query.posts',
    'Query.postPage',
    'Query.post',
    'Query.contentQueue',
    'Query.contentQueuePage',
    'Query.contentItem',
    'Query.contentEvents',
  ],
  'posts.write': [
    'Mutation.createPost',
    'Mutation.updatePost',
    'Mutation.deletePost',
    'Mutation.editContentItem',
    'Mutation.rescheduleContentItem',
    'Mutation.retryContentItem',
  ],
  'suggestions.read': ['Query.suggestions'],
  'suggestions.write': [
    'Mutation.approveContentItem',
    'Mutation.rejectContentItem',
    'Mutation.createReviewLink',
    'Mutation.revokeReviewLink',
  ],
  'analytics.read': ['Query.contentDaily'],
  'brands.read': ['Query.brand', 'Query.brands', 'Query.brandPage'],
  'settings.read': ['Query.brandSettings', 'Query.webhooks', 'Query.webhookDeliveries'],
  'settings.write': [
    'Mutation.createBrand',
    'Mutation.updateBrandSettings',
    'Mutation.createWebhook',
    'Mutation.updateWebhook',
    'Mutation.deleteWebhook',
    'Mutation.redeliverWebhookEvent',
  ],
  'campaigns.read': ['Query.campaigns', 'Query.campaign'],
  // setPostCampaign changes a post too: it needs campaigns.write and posts.write (test/security/brand-reach.test.ts).
  'campaigns.write': ['Mutation.createCampaign', 'Mutation.updateCampaign', 'Mutation.deleteCampaign'],
  'media.read': ['Query.media', 'Query.mediaPage', 'Query.mediaFile'],
  'media.write': ['Mutation.requestMediaUpload', 'Mutation.generateImage'],
  'integrations.read': ['Query.integrations', 'Query.integrationPlatforms'],
  // Completing a connect carries no credential: the single-use state is one (allowed, not scoped).
  'integrations.write': ['Mutation.startIntegrationConnect'],
};

/** Root field -> the scope its rule asks for, read from the rule tree the subgraph is built with. */
function scopedOperations(tree: Record<string, unknown>): Map<string, string> {
  const scoped = new Map<string, string>();
  for (const root of ['Query', 'Mutation']) {
    for (const [field, rule] of Object.entries((tree[root] ?? {}) as Record<string, { name?: string }>)) {
      const match = /^scope:(.+)$/.exec(rule?.name ?? '');
      if (match) scoped.set(`${root}.${field}`, match[1]);
    }
  }
  return scoped;
}

/** A value of the input type that passes GraphQL validation, so only the shield (or the service after it) can refuse the call. */
function sampleValue(type: GraphQLInputType): unknown {
  const nullable = getNullableType(type);
  if (isListType(nullable)) return [];
  if (isEnumType(nullable)) return nullable.getValues()[0].value;
  if (isInputObjectType(nullable)) {
    const value: Record<string, unknown> = {};
    for (const field of Object.values(nullable.getFields()))
      if (isNonNullType(field.type)) value[field.name] = sampleValue(field.type);
    return value;
  }
  if (isScalarType(nullable)) {
    if (nullable.name === 'Int' || nullable.name === 'Float') return 1;
    if (nullable.name === 'Boolean') return false;
    if (nullable.name === 'ID') return '00000000-0000-4000-8000-000000000000';
    return 'sample';
  }
  return null;
}

function operationFor(schema: GraphQLSchema, key: string): { query: string; variables: Record<string, unknown> } {
  const [root, name] = key.split('.');
  const type = root === 'Query' ? schema.getQueryType()! : schema.getMutationType()!;
  const field = type.getFields()[name] as GraphQLField<unknown, unknown>;
  const required = field.args.filter((arg) => isNonNullType(arg.type));
  const declarations = required.map((arg) => `$${arg.name}: ${arg.type.toString()}`).join(', ');
  const argumentList = required.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  const selection = isObjectType(getNamedType(field.type)) ? ' { __typename }' : '';
  const keyword = root === 'Query' ? 'query' : 'mutation';
  return {
    query: `${keyword} Probe${declarations ? `(${declarations})` : ''} { ${name}${argumentList ? `(${argumentList})` : ''}${selection} }`,
    variables: Object.fromEntries(required.map((arg) => [arg.name, sampleValue(arg.type)])),
  };
}

describe('social GraphQL: scopes, campaigns, brand settings', () => {
  let platform: TestPlatform;
  let gateway: string;
  let schema: GraphQLSchema;
  const bearer = async (sub: string, scopes?: string[]) => ({
    authorization: `Bearer ${await platform.token(sub, scopes)}`,
  });
  const codeOf = (body: { errors?: Array<{ extensions?: Record<string, unknown> }> }) =>
    body.errors?.[0]?.extensions?.code as string | undefined;

  beforeAll(async () => {
    platform = await startTestPlatform();
    gateway = platform.urls.gateway;
    const introspection = await graphql<IntrospectionQuery>(gateway, getIntrospectionQuery());
    schema = buildClientSchema(introspection.body.data!);
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('guards every operation with the scope of the scope table', () => {
    const expected = new Map(
      Object.entries(SCOPE_TABLE).flatMap(([scope, operations]) =>
        operations.map((operation) => [operation, scope] as const),
      ),
    );
    expect(Object.fromEntries(scopedOperations(socialRules()))).toEqual(Object.fromEntries(expected));
    // Every scope of the catalogue guards something real in the composed schema.
    const guarded = new Set(scopedOperations(socialRules()).values());
    expect([...guarded].sort()).toEqual([...SOCIAL_SCOPES].sort());
  });

  it('opens each operation with its scope, and with no other of the 14', async () => {
    const operations = scopedOperations(socialRules());
    const failures: string[] = [];
    const tokens = new Map<string, Record<string, string>>();
    for (const scope of SOCIAL_SCOPES) tokens.set(scope, await bearer('matrix', [scope]));
    for (const [key, scope] of operations) {
      const { query, variables } = operationFor(schema, key);
      for (const candidate of SOCIAL_SCOPES) {
        const { body } = await graphql(gateway, query, variables, tokens.get(candidate));
        const code = codeOf(body);
        const denied = code === 'FORBIDDEN' || code === 'UNAUTHENTICATED';
        if (candidate === scope && denied) failures.push(`${key} refused its own scope ${scope}: ${code}`);
        if (candidate !== scope && code !== 'FORBIDDEN')
          failures.push(`${key} (needs ${scope}) answered ${code ?? 'data'} to ${candidate}`);
      }
      const anonymous = await graphql(gateway, query, variables);
      if (codeOf(anonymous.body) !== 'UNAUTHENTICATED')
        failures.push(`${key} answered ${codeOf(anonymous.body)} without credentials`);
    }
    expect(failures).toEqual([]);
    expect(operations.size).toBeGreaterThan(30);
  });

  it('denies root fields without a rule, and lets a token without a scope claim do everything', async () => {
    const full = await bearer('everything');
    expect(codeOf((await graphql(gateway, '{ viewer { userId scopes } }', {}, full)).body)).toBeUndefined();
    expect(
      codeOf(
        (await graphql(gateway, '{ posts { totalCount } brands { totalCount } contentDaily { timezone } }', {}, full))
          .body,
      ),
    ).toBeUndefined();
    expect(codeOf((await graphql(gateway, '{ socialHealth { ok } }')).body)).toBeUndefined();
    // Entity lookups (subgraph to subgraph) apply the type's scope too.
    const entities = await graphql(
      platform.subgraphs.social.url,
      '{ _entities(representations: [{ __typename: "Post", id: "00000000-0000-4000-8000-000000000000" }]) { __typename } }',
      {},
      await bearer('e', ['brands.read']),
    );
    expect(codeOf(entities.body)).toBe('FORBIDDEN');
  });

  it('answers a write with what it wrote, to the write scope alone', async () => {
    const owner = await bearer('writer');
    const brand = (await graphql<any>(gateway, 'mutation { createBrand(input: { name: "Writes" }) { id } }', {}, owner))
      .body.data.createBrand.id;
    const post = await graphql<any>(
      gateway,
      'mutation ($input: CreatePostInput!) { createPost(input: $input) { id brandId content status platforms } }',
      { input: { brandId: brand, content: 'written back' } },
      await bearer('writer', ['posts.write']),
    );
    expect(post.body.errors).toBeUndefined();
    expect(post.body.data.createPost).toMatchObject({ brandId: brand, content: 'written back', status: 'DRAFT' });
    const campaign = await graphql<any>(
      gateway,
      'mutation ($input: CreateCampaignInput!) { createCampaign(input: $input) { id name brandId } }',
      { input: { brandId: brand, name: 'Written' } },
      await bearer('writer', ['campaigns.write']),
    );
    expect(campaign.body.errors).toBeUndefined();
    expect(campaign.body.data.createCampaign).toMatchObject({ name: 'Written', brandId: brand });
  });

  it('names platforms by the Platform enum wherever the graph names one, each value described', () => {
    const typeOf = (typeName: string, field: string) => {
      const type = schema.getType(typeName);
      if (!isObjectType(type) && !isInputObjectType(type)) throw new Error(`${typeName} has no fields`);
      return type.getFields()[field].type.toString();
    };
    expect(typeOf('CreatePostInput', 'platforms')).toBe('[Platform!]');
    expect(typeOf('UpdatePostInput', 'platforms')).toBe('[Platform!]');
    expect(typeOf('ContentEditInput', 'platforms')).toBe('[Platform!]');
    expect(typeOf('Post', 'platforms')).toBe('[Platform!]!');
    expect(typeOf('ReviewedPost', 'platforms')).toBe('[Platform!]!');
    expect(typeOf('PublishAttempt', 'platform')).toBe('Platform!');
    expect(typeOf('Integration', 'platform')).toBe('Platform!');
    expect(typeOf('Query', 'integrationPlatforms')).toBe('[Platform!]');
    for (const mutation of ['startIntegrationConnect', 'completeIntegrationConnect']) {
      const fields = schema.getMutationType()!.getFields();
      const argument = fields[mutation].args.find((arg) => arg.name === 'platform');
      expect(argument?.type.toString()).toBe('Platform!');
    }
    const platformEnum = schema.getType('Platform');
    if (!isEnumType(platformEnum)) throw new Error('Platform is not an enum');
    expect(platformEnum.description).toBeTruthy();
    const values = platformEnum.getValues();
    // Wider than the two published to: the names legacy clients send for the networks they write for.
    expect(values.map((value) => value.name)).toEqual(
      expect.arrayContaining(
        [
          'MASTODON',
          'X',
          'TWITTER',
          'BLUESKY',
          'THREADS',
          'LINKEDIN',
          'FACEBOOK',
          'INSTAGRAM',
          'TIKTOK',
          'YOUTUBE',
        ].concat(
          ['PINTEREST', 'REDDIT', 'TUMBLR', 'TELEGRAM', 'DISCORD', 'SLACK', 'GOOGLE_BUSINESS', 'SNAPCHAT', 'WHATSAPP'],
          ['NOSTR', 'LEMMY', 'VK', 'WECHAT', 'WEIBO'],
        ),
      ),
    );
    const published = values.filter((value) => /published to, once an account is connected/.test(value.description!));
    expect(published.map((value) => value.name)).toEqual(['MASTODON', 'X']);
    expect(values.filter((value) => !value.description)).toEqual([]);
  });

  it('takes and answers Platform values, one of each, and refuses any other name before a resolver runs', async () => {
    const owner = await bearer('platformer');
    const postOf = async (platforms: unknown) =>
      graphql<any>(
        gateway,
        'mutation ($input: CreatePostInput!) { createPost(input: $input) { id platforms } }',
        { input: { content: 'to the networks', platforms } },
        owner,
      );
    const created = await postOf(['MASTODON', 'GOOGLE_BUSINESS', 'MASTODON', 'TWITTER']);
    expect(created.body.errors).toBeUndefined();
    expect(created.body.data.createPost.platforms).toEqual(['MASTODON', 'GOOGLE_BUSINESS', 'TWITTER']);
    const id = created.body.data.createPost.id as string;
    const stored = await platform.subgraphs.social.orm.em
      .fork()
      .getConnection()
      .execute('select platforms from social.post where id = ?', [id]);
    expect(stored[0].platforms).toEqual(['mastodon', 'google_business', 'twitter']);
    const updated = await graphql<any>(
      gateway,
      'mutation ($id: ID!) { updatePost(id: $id, input: { platforms: [X, BLUESKY] }) { platforms } }',
      { id },
      owner,
    );
    expect(updated.body.data.updatePost.platforms).toEqual(['X', 'BLUESKY']);
    const read = await graphql<any>(gateway, 'query ($id: ID!) { post(id: $id) { platforms } }', { id }, owner);
    expect(read.body.data.post.platforms).toEqual(['X', 'BLUESKY']);

    const count = async () =>
      (await graphql<any>(gateway, '{ posts(first: 1) { totalCount } }', {}, owner)).body.data.posts.totalCount;
    const before = await count();
    // REST's lower-case words are REST's: the graph takes the enum's names only.
    for (const platforms of [['MYSPACE'], ['mastodon'], ['GOOGLE-BUSINESS']]) {
      const refused = await postOf(platforms);
      expect(refused.body.data).toBeUndefined();
      expect(codeOf(refused.body)).toBe('BAD_USER_INPUT');
      expect(refused.body.errors![0].message).toContain('"Platform"');
    }
    const literal = await graphql<any>(
      gateway,
      'mutation { createPost(input: { content: "x", platforms: [MYSPACE] }) { id } }',
      {},
      owner,
    );
    expect(codeOf(literal.body)).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(await count()).toBe(before);
  });

  it('groups posts of one brand into campaigns, batching the posts of a list', async () => {
    const owner = await bearer('campaigner');
    const brand = (await graphql<any>(gateway, 'mutation { createBrand(input: { name: "Shop" }) { id } }', {}, owner))
      .body.data.createBrand.id;
    const other = (await graphql<any>(gateway, 'mutation { createBrand(input: { name: "Other" }) { id } }', {}, owner))
      .body.data.createBrand.id;
    const made = await graphql<any>(
      gateway,
      'mutation ($input: CreateCampaignInput!) { createCampaign(input: $input) { id name brandId } }',
      { input: { brandId: brand, name: 'Spring sale' } },
      owner,
    );
    expect(made.body.data.createCampaign).toMatchObject({ name: 'Spring sale', brandId: brand });
    const campaign = made.body.data.createCampaign.id;
    const create = (brandId: string, content: string) =>
      graphql<any>(
        gateway,
        'mutation ($input: CreatePostInput!) { createPost(input: $input) { id } }',
        { input: { brandId, content } },
        owner,
      ).then((r) => r.body.data.createPost.id);
    const first = await create(brand, 'one');
    const second = await create(brand, 'two');
    const foreign = await create(other, 'elsewhere');
    const assign = (postId: string, campaignId: string | null) =>
      graphql<any>(
        gateway,
        'mutation ($postId: ID!, $campaignId: ID) { setPostCampaign(postId: $postId, campaignId: $campaignId) { id campaignId } }',
        { postId, campaignId },
        owner,
      );
    expect((await assign(first, campaign)).body.data.setPostCampaign.campaignId).toBe(campaign);
    await assign(second, campaign);
    const wrongBrand = await assign(foreign, campaign);
    expect(codeOf(wrongBrand.body)).toBe('BAD_USER_INPUT');
    const list = await graphql<any>(
      gateway,
      '{ campaigns { totalCount nodes { name brand { name } posts { content } } } }',
      {},
      owner,
    );
    expect(list.body.data.campaigns).toEqual({
      totalCount: 1,
      nodes: [{ name: 'Spring sale', brand: { name: 'Shop' }, posts: [{ content: 'two' }, { content: 'one' }] }],
    });
    // Moving a post in or out is a change of the post, with its event.
    const events = await graphql<any>(
      gateway,
      'query ($id: ID!) { contentItem(id: $id) { events { type after } } }',
      { id: first },
      owner,
    );
    expect(events.body.data.contentItem.events[0]).toMatchObject({ type: 'UPDATED', after: { campaignId: campaign } });
    expect((await assign(first, null)).body.data.setPostCampaign.campaignId).toBeNull();
    const renamed = await graphql<any>(
      gateway,
      'mutation ($id: ID!) { updateCampaign(id: $id, input: { name: "Summer sale" }) { name } }',
      { id: campaign },
      owner,
    );
    expect(renamed.body.data.updateCampaign.name).toBe('Summer sale');
    // Nobody else sees or changes it.
    const stranger = await bearer('stranger');
    expect(
      (await graphql<any>(gateway, 'query ($id: ID!) { campaign(id: $id) { id } }', { id: campaign }, stranger)).body
        .data.campaign,
    ).toBeNull();
    expect(
      codeOf(
        (
          await graphql(
            gateway,
            'mutation ($id: ID!) { deleteCampaign(id: $id) { deletedId } }',
            { id: campaign },
            stranger,
          )
        ).body,
      ),
    ).toBe('NOT_FOUND');
    expect(
      (
        await graphql<any>(
          gateway,
          'mutation ($id: ID!) { deleteCampaign(id: $id) { deletedId campaign { id name } } }',
          { id: campaign },
          owner,
        )
      ).body.data.deleteCampaign,
    ).toEqual({ deletedId: campaign, campaign: { id: campaign, name: expect.any(String) } });
    const after = await graphql<any>(
      gateway,
      'query ($id: ID!) { post(id: $id) { campaignId } }',
      { id: second },
      owner,
    );
    expect(after.body.data.post.campaignId).toBeNull();
  });

  it('keeps brand settings: IANA time zone and default posting times', async () => {
    const owner = await bearer('planner');
    const brand = (
      await graphql<any>(
        gateway,
        'mutation { createBrand(input: { name: "Planner", timezone: "Europe/Berlin" }) { id } }',
        {},
        owner,
      )
    ).body.data.createBrand.id;
    const read = await graphql<any>(
      gateway,
      'query ($id: ID!) { brandSettings(brandId: $id) { timezone defaultPostingTimes } }',
      { id: brand },
      owner,
    );
    expect(read.body.data.brandSettings).toEqual({ timezone: 'Europe/Berlin', defaultPostingTimes: [] });
    const update = (input: Record<string, unknown>, headers = owner) =>
      graphql<any>(
        gateway,
        'mutation ($id: ID!, $input: BrandSettingsInput!) { updateBrandSettings(brandId: $id, input: $input) { timezone defaultPostingTimes } }',
        { id: brand, input },
        headers,
      );
    expect(
      (await update({ timezone: 'America/New_York', defaultPostingTimes: ['17:30', '09:00', '09:00'] })).body.data
        .updateBrandSettings,
    ).toEqual({
      timezone: 'America/New_York',
      defaultPostingTimes: ['09:00', '17:30'],
    });
    const badZone = await update({ timezone: 'Nowhere/Special' });
    expect([codeOf(badZone.body), badZone.body.errors?.[0].extensions?.errors]).toEqual([
      'BAD_USER_INPUT',
      [expect.objectContaining({ field: 'timezone' })],
    ]);
    const badTime = await update({ defaultPostingTimes: ['25:00'] });
    expect(codeOf(badTime.body)).toBe('BAD_USER_INPUT');
    expect(JSON.stringify(badTime.body.errors?.[0].extensions?.errors)).toContain('defaultPostingTimes');
    expect(codeOf((await update({ timezone: 'UTC' }, await bearer('planner', ['settings.read']))).body)).toBe(
      'FORBIDDEN',
    );
    expect(codeOf((await update({ timezone: 'UTC' }, await bearer('intruder'))).body)).toBe('NOT_FOUND');
  });

  it('limits an API key to its brands in GraphQL too', async () => {
    const owner = await bearer('keyholder');
    const mine = (await graphql<any>(gateway, 'mutation { createBrand(input: { name: "Mine" }) { id } }', {}, owner))
      .body.data.createBrand.id;
    const hidden = (
      await graphql<any>(gateway, 'mutation { createBrand(input: { name: "Hidden" }) { id } }', {}, owner)
    ).body.data.createBrand.id;
    const made = await graphql<any>(
      gateway,
      'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key apiKey { id scopes brandIds } } }',
      {
        input: {
          name: 'scoped',
          scopes: ['brands.read', 'posts.write', 'posts.read', 'settings.read', `brand:${mine}`],
        },
      },
      owner,
    );
    const { key, apiKey } = made.body.data.createApiKey;
    expect(apiKey).toMatchObject({
      scopes: ['brands.read', 'posts.read', 'posts.write', 'settings.read'],
      brandIds: [mine],
    });
    const withKey = { 'x-api-key': key };
    const brands = await graphql<any>(gateway, '{ brands { nodes { id } } }', {}, withKey);
    expect(brands.body.data.brands.nodes).toEqual([{ id: mine }]);
    expect(
      (
        await graphql<any>(
          gateway,
          'query ($id: ID!) { brandSettings(brandId: $id) { timezone } }',
          { id: hidden },
          withKey,
        )
      ).body.data.brandSettings,
    ).toBeNull();
    const create = (brandId?: string) =>
      graphql<any>(
        gateway,
        'mutation ($input: CreatePostInput!) { createPost(input: $input) { brandId } }',
        { input: { content: 'by key', brandId } },
        withKey,
      );
    expect((await create()).body.data.createPost.brandId).toBe(mine);
    expect(codeOf((await create(hidden)).body)).toBe('BAD_USER_INPUT');
    expect(codeOf((await graphql(gateway, '{ campaigns { totalCount } }', {}, withKey)).body)).toBe('FORBIDDEN');
    expect(codeOf((await graphql(gateway, '{ apiKeys { id } }', {}, withKey)).body)).toBe('FORBIDDEN');
    const listed = await graphql<any>(gateway, '{ apiKeys { id lastUsedAt } }', {}, owner);
    expect(listed.body.data.apiKeys).toEqual([{ id: apiKey.id, lastUsedAt: expect.any(String) }]);
  });

  it('keeps an API key to its brands when a campaign list names another brand', async () => {
    const owner = await bearer('campaign-keyholder');
    const brandNamed = async (name: string) =>
      (
        await graphql<any>(
          gateway,
          'mutation ($name: String!) { createBrand(input: { name: $name }) { id } }',
          { name },
          owner,
        )
      ).body.data.createBrand.id as string;
    const mine = await brandNamed('Mine');
    const hidden = await brandNamed('Hidden');
    for (const brandId of [mine, hidden]) {
      await graphql(
        gateway,
        'mutation ($input: CreateCampaignInput!) { createCampaign(input: $input) { id } }',
        { input: { name: 'Launch', brandId } },
        owner,
      );
    }
    const made = await graphql<any>(
      gateway,
      'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }',
      { input: { name: 'campaigns', scopes: ['campaigns.read', `brand:${mine}`] } },
      owner,
    );
    const withKey = { 'x-api-key': made.body.data.createApiKey.key as string };
    const count = async (brandId?: string) =>
      (
        await graphql<any>(
          gateway,
          'query ($brandId: ID) { campaigns(brandId: $brandId) { totalCount } }',
          { brandId },
          withKey,
        )
      ).body.data.campaigns.totalCount;
    expect(await count()).toBe(1);
    expect(await count(mine)).toBe(1);
    expect(await count(hidden)).toBe(0);
  });
});
