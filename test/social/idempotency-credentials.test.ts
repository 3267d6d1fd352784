import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { graphql, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { freePort } from '#test/support/ports.js';

const CREATE_API_KEY = `mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key apiKey { id scopes } } }`;
const CREATE_POST = `mutation ($input: CreatePostInput!) { createPost(input: $input) { id content brandId } }`;
const CREATE_WEBHOOK = `mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { secret webhook { id } } }`;
const CREATE_LINK = `mutation ($postId: ID!) { createReviewLink(postId: $postId) { id token url } }`;

/**
 * An Idempotency-Key's replay answers only the credential that made the first request, once the
 * shield's rules hold for it, and an answer that holds a secret shown once (an API key, a webhook's
 * signing secret, a review link's token) is never kept: a retry is told so, and the records' table
 * holds none of them.
 */
describe.each([
  { label: 'PostgreSQL (or PGlite when TEST_DATABASE_URL is unset)', embedded: false, overHttp: false },
  { label: 'embedded PGlite', embedded: true, overHttp: false },
  // The gateway calls the subgraph over HTTP: Apollo Server's idempotency plugin runs the mutation there.
  { label: 'a subgraph called over HTTP', embedded: false, overHttp: true },
])('social Idempotency-Key per credential on $label', ({ embedded, overHttp }) => {
  let platform: TestPlatform;
  let owner: Record<string, string>;
  let brandA: string;
  let brandB: string;

  const send = (query: string, variables: Record<string, unknown>, headers: Record<string, string>, key?: string) =>
    graphql<Record<string, any>>(platform.urls.gateway, query, variables, {
      ...headers,
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    });
  const ok = async (query: string, variables: Record<string, unknown>, headers = owner) => {
    const { body } = await send(query, variables, headers);
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data!;
  };
  const sql = (text: string, params: unknown[] = []) =>
    platform.subgraphs.social.orm.em.fork().getConnection().execute(text, params);
  const recordOf = async (key: string) =>
    (await sql('select caller, state, answer from social.idempotency_key where key = ?', [key])) as {
      caller: string;
      state: string;
      answer: unknown;
    }[];
  /** An API key of the owner (made without an Idempotency-Key): its key and id. */
  const apiKey = async (scopes: string[]) => {
    const made = (await ok(CREATE_API_KEY, { input: { name: `key ${randomUUID()}`, scopes } })).createApiKey;
    return { headers: { 'x-api-key': made.key as string }, id: made.apiKey.id as string };
  };

  beforeAll(async () => {
    const port = await freePort();
    const overHttpEnv = { SOCIAL_SUBGRAPH_PORT: String(port), SOCIAL_SUBGRAPH_URL: `http://127.0.0.1:${port}/graphql` };
    platform = await startTestPlatform(
      { WEB_URL: 'http://web.test/app', ...(overHttp ? overHttpEnv : {}) },
      { embedded },
    );
    owner = { authorization: `Bearer ${await platform.token(`owner-${randomUUID()}`)}` };
    brandA = (await ok(`mutation { createBrand(input: { name: "Brand A" }) { id } }`, {})).createBrand.id;
    brandB = (await ok(`mutation { createBrand(input: { name: "Brand B" }) { id } }`, {})).createBrand.id;
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it("never answers the owner's new API key to a weaker API key of the same owner, and keeps no key", async () => {
    const weak = await apiKey(['analytics.read']);
    const key = randomUUID();
    const variables = { input: { name: 'strong', scopes: ['posts.write', 'posts.read'] } };
    const first = await send(CREATE_API_KEY, variables, owner, key);
    const made = first.body.data!.createApiKey;
    expect(made.key).toMatch(/\w{20,}/);

    const replayed = await send(CREATE_API_KEY, variables, weak.headers, key);
    expect(JSON.stringify(replayed.body)).not.toContain(made.key);
    expect(replayed.body.errors?.[0].extensions?.code).toBe('FORBIDDEN');

    // The owner's own retry is no replay of the key either: it was shown once and is not kept.
    const retried = await send(CREATE_API_KEY, variables, owner, key);
    expect(JSON.stringify(retried.body)).not.toContain(made.key);
    expect(retried.body.errors?.[0].extensions).toMatchObject({
      code: 'CONFLICT',
      errors: [{ field: 'Idempotency-Key', message: expect.stringContaining('secret') }],
    });
    // And it made no second key.
    const keys = (await ok(`query { apiKeys { id name } }`, {})).apiKeys as { name: string }[];
    expect(keys.filter((listed) => listed.name === 'strong')).toHaveLength(1);

    const records = await recordOf(key);
    expect(records).toEqual([{ caller: expect.stringMatching(/^bearer:/), state: 'done', answer: null }]);
    expect(JSON.stringify(records)).not.toContain(made.key);
  });

  it('never answers a post of another brand to a brand-limited API key of the same owner', async () => {
    const limited = await apiKey(['posts.write', 'posts.read', `brand:${brandA}`]);
    const key = randomUUID();
    const variables = { input: { content: `Brand B news ${key}`, brandId: brandB } };
    const first = await send(CREATE_POST, variables, owner, key);
    expect(first.body.data!.createPost.brandId).toBe(brandB);
    const again = await send(CREATE_POST, variables, limited.headers, key);
    expect(JSON.stringify(again.body)).not.toContain(first.body.data!.createPost.id);
    expect((again.body as { extensions?: Record<string, unknown> }).extensions?.idempotentReplay).toBeUndefined();
    expect(again.body.errors?.length).toBeGreaterThan(0);
    // The owner's own retry still replays.
    const retried = await send(CREATE_POST, variables, owner, key);
    expect(retried.body.data).toEqual(first.body.data);

    // A record of an API key is its own, by the key's id.
    const ownKey = randomUUID();
    const ownPost = { input: { content: `Brand A news ${ownKey}`, brandId: brandA } };
    expect((await send(CREATE_POST, ownPost, limited.headers, ownKey)).body.data?.createPost).toBeTruthy();
    expect((await recordOf(ownKey)).map((record) => record.caller)).toEqual([`api-key:${limited.id}`]);
  });

  it("checks the root field's rules before a replay: a credential without the scope gets the shield's FORBIDDEN", async () => {
    // A weak key that may make brands (and so a record of its own) but not posts.
    const weak = await apiKey(['analytics.read', 'settings.write']);
    const ownKey = randomUUID();
    expect(
      (await send(`mutation { createBrand(input: { name: "Weak" }) { id } }`, {}, weak.headers, ownKey)).body.data,
    ).toBeTruthy();
    const [{ caller: weakCaller }] = await recordOf(ownKey);
    const key = randomUUID();
    const variables = { input: { content: `Kept ${key}`, brandId: brandA } };
    const first = await send(CREATE_POST, variables, owner, key);
    expect(first.body.data!.createPost.id).toBeTruthy();
    // A record that would answer the weak key (as one kept under an older caller format could).
    await sql('update social.idempotency_key set caller = ? where key = ?', [weakCaller, key]);
    const refused = await send(CREATE_POST, variables, weak.headers, key);
    expect(JSON.stringify(refused.body)).not.toContain(first.body.data!.createPost.id);
    expect(refused.body.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    expect(refused.body.errors?.[0].message).toContain('posts.write');
  });

  it('keeps no webhook signing secret and no review link token; a retry is told, never shown them again', async () => {
    const webhookKey = randomUUID();
    const webhook = { input: { url: 'https://hooks.example/in', events: ['post.published'] } };
    const created = await send(CREATE_WEBHOOK, webhook, owner, webhookKey);
    const { secret } = created.body.data!.createWebhook;
    expect(secret).toMatch(/^whsec_/);
    const again = await send(CREATE_WEBHOOK, webhook, owner, webhookKey);
    expect(JSON.stringify(again.body)).not.toContain(secret);
    expect(again.body.errors?.[0].extensions?.code).toBe('CONFLICT');

    const post = (
      await ok(CREATE_POST, { input: { content: `Suggested ${webhookKey}`, status: 'SUGGESTED', brandId: brandA } })
    ).createPost;
    const linkKey = randomUUID();
    const link = await send(CREATE_LINK, { postId: post.id }, owner, linkKey);
    const { token } = link.body.data!.createReviewLink;
    expect(token).toBeTruthy();
    const linkAgain = await send(CREATE_LINK, { postId: post.id }, owner, linkKey);
    expect(JSON.stringify(linkAgain.body)).not.toContain(token);
    expect(linkAgain.body.errors?.[0].extensions?.code).toBe('CONFLICT');

    const kept = JSON.stringify(await sql('select * from social.idempotency_key'));
    expect(kept).not.toContain(secret);
    expect(kept).not.toContain(token);
    expect(await recordOf(webhookKey)).toEqual([expect.objectContaining({ state: 'done', answer: null })]);
    expect(await recordOf(linkKey)).toEqual([expect.objectContaining({ state: 'done', answer: null })]);
  });
});
