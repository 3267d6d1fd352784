import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { until } from '#test/social-reach/helpers.js';
import { Receiver } from './receiver.js';

const CREATE_LINK = `mutation ($postId: ID!, $hours: Int) { createReviewLink(postId: $postId, expiresInHours: $hours) { id url token expiresAt } }`;

/**
 * Client review links over REST through the whole chain: the owner makes a link in GraphQL, a
 * client without an account sees and decides on the post at /api/review/{token}, the audit log
 * names the link, and the owner's webhook hears of it.
 */
describe('social review links', () => {
  let platform: TestPlatform;
  let base: string;
  let alice: Record<string, string>;
  let brandId: string;
  const receiver = new Receiver();

  const sql = (text: string, params: unknown[] = []) =>
    platform.subgraphs.social.orm.em.fork().getConnection().execute(text, params);
  const ok = async (query: string, variables: Record<string, unknown> = {}, headers = alice) => {
    const { body } = await graphql<Record<string, any>>(platform.urls.gateway, query, variables, headers);
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data!;
  };
  const suggestion = async (content: string, extra: Record<string, unknown> = {}, brand = brandId) =>
    (
      await rest(
        'POST',
        `${base}/api/posts`,
        { content, status: 'suggested', brandId: brand, platforms: ['mastodon'], ...extra },
        alice,
      )
    ).body as { id: string };
  const link = async (postId: string, hours?: number, headers = alice) =>
    (await ok(CREATE_LINK, { postId, hours }, headers)).createReviewLink as {
      id: string;
      url: string;
      token: string;
      expiresAt: string;
    };

  beforeAll(async () => {
    await receiver.start();
    platform = await startTestPlatform({ WEB_URL: 'http://web.test/app', TRUST_PROXY: 'loopback' });
    base = platform.urls.socialRest;
    alice = { authorization: `Bearer ${await platform.token('alice')}` };
    brandId = (await ok(`mutation { createBrand(input: { name: "Acme Coffee" }) { id } }`)).createBrand.id;
    Object.assign(platform.subgraphs.social.runtime.webhooks, { outboxPollMs: 200 });
  });

  afterAll(async () => {
    await platform?.stop();
    await receiver.stop();
  });

  it('lets a client see and approve a suggested post, recorded as the link, told to the webhooks', async () => {
    const { secret } = (
      await ok(`mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { secret } }`, {
        input: { url: receiver.url, events: ['post.approved', 'post.rejected'] },
      })
    ).createWebhook;
    const scheduledAt = new Date(Date.now() + 3600_000).toISOString();
    const post = await suggestion('Our new roast is here', { scheduledAt });
    const created = await link(post.id);
    expect(created.url).toBe(`http://web.test/app/review/${created.token}`);
    expect(created.token).toMatch(/^[\w-]{43}$/);
    expect(new Date(created.expiresAt).getTime() - Date.now()).toBeGreaterThan(71.9 * 3600_000);
    const [row] = await sql('select token_hash from social.review_link where id = ?', [created.id]);
    expect(row.token_hash).not.toContain(created.token);

    const shown = await rest('GET', `${base}/api/review/${created.token}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual({
      content: 'Our new roast is here',
      platforms: ['mastodon'],
      mediaUrls: [],
      scheduledAt,
      brandName: 'Acme Coffee',
      status: 'suggested',
      expiresAt: created.expiresAt,
    });
    expect(JSON.stringify(shown.body)).not.toContain('alice');

    const approved = await rest('POST', `${base}/api/review/${created.token}/approve`, { comment: 'Looks great' });
    expect(approved.status).toBe(200);
    // As the owner's approve: a scheduled suggestion joins the queue.
    expect(approved.body.status).toBe('queued');
    const events = await rest(
      'GET',
      `${base}/api/content-ops/events?contentId=${post.id}&type=approved`,
      undefined,
      alice,
    );
    expect(events.body.data[0]).toMatchObject({
      type: 'approved',
      actor: { type: 'review_link', id: created.id },
      after: { reviewComment: 'Looks great', status: 'queued' },
    });

    const [told] = await until(async () => {
      const found = receiver.of('post.approved', post.id);
      return found.length ? found : null;
    });
    expect(new StandardWebhook(secret).verify(told.body, told.headers)).toMatchObject({
      type: 'post.approved',
      data: {
        postId: post.id,
        status: 'queued',
        comment: 'Looks great',
        actor: { type: 'review_link', id: created.id },
      },
    });

    // A decision is final: the post is no longer a suggestion, so the link answers 409 to every use.
    const replay = await rest('POST', `${base}/api/review/${created.token}/approve`, {});
    expect(replay.status).toBe(409);
    expect(replay.headers.get('content-type')).toContain('application/problem+json');
    expect((await rest('POST', `${base}/api/review/${created.token}/reject`)).status).toBe(409);
    expect((await rest('GET', `${base}/api/review/${created.token}`)).status).toBe(409);
  });

  it('answers 409 (REST) and CONFLICT (GraphQL) once the post is no longer a suggestion, showing nothing of it', async () => {
    const post = await suggestion('Before the owner decided');
    const created = await link(post.id);
    expect((await rest('GET', `${base}/api/review/${created.token}`)).status).toBe(200);
    // The owner approves it themselves, then edits it: the link must not show the new content.
    await ok(`mutation ($id: ID!) { approveContentItem(id: $id) { id } }`, { id: post.id });
    const edited = await rest('PUT', `${base}/api/posts/${post.id}`, { content: 'Changed after approval' }, alice);
    expect(edited.status).toBe(200);

    const shown = await rest('GET', `${base}/api/review/${created.token}`);
    expect(shown.status).toBe(409);
    expect(shown.body).toMatchObject({ status: 409, code: 'CONFLICT' });
    expect(JSON.stringify(shown.body)).not.toContain('Changed after approval');
    const { body } = await graphql<Record<string, any>>(
      platform.urls.gateway,
      'query ($token: String!) { reviewByToken(token: $token) { content mediaUrls } }',
      { token: created.token },
    );
    expect(body.data?.reviewByToken).toBeNull();
    expect(body.errors?.[0].extensions?.code).toBe('CONFLICT');
    expect(JSON.stringify(body)).not.toContain('Changed after approval');
  });

  it('rejects with a comment, as the owner would', async () => {
    const post = await suggestion('Not this one');
    const created = await link(post.id, 1);
    const rejected = await rest('POST', `${base}/api/review/${created.token}/reject`, { comment: 'Wrong tone' });
    expect(rejected.status).toBe(200);
    expect(rejected.body.status).toBe('rejected');
    const item = await rest('GET', `${base}/api/content-ops/items/${post.id}`, undefined, alice);
    expect(item.body.status).toBe('rejected');
  });

  it('answers 404 for an unknown token, 410 once expired or revoked, 400 for a comment that is not text', async () => {
    expect((await rest('GET', `${base}/api/review/not-a-token`)).status).toBe(404);
    expect((await rest('POST', `${base}/api/review/${'a'.repeat(43)}/approve`, {})).status).toBe(404);

    const expiring = await link((await suggestion('Expiring')).id);
    await sql(`update social.review_link set expires_at = now() - interval '1 second' where id = ?`, [expiring.id]);
    const expired = await rest('GET', `${base}/api/review/${expiring.token}`);
    expect(expired.status).toBe(410);
    expect(expired.body).toMatchObject({ status: 410, title: 'Gone', detail: expect.stringContaining('expired') });
    expect((await rest('POST', `${base}/api/review/${expiring.token}/approve`, {})).status).toBe(410);

    const post = await suggestion('Revoked');
    const revoking = await link(post.id);
    const revoked = await ok(`mutation ($id: ID!) { revokeReviewLink(id: $id) { id revokedAt } }`, { id: revoking.id });
    expect(revoked.revokeReviewLink.revokedAt).not.toBeNull();
    expect((await rest('POST', `${base}/api/review/${revoking.token}/approve`, {})).status).toBe(410);
    // Nothing changed.
    expect((await rest('GET', `${base}/api/content-ops/items/${post.id}`, undefined, alice)).body.status).toBe(
      'suggested',
    );

    const tooLong = await graphql(platform.urls.gateway, CREATE_LINK, { postId: post.id, hours: 721 }, alice);
    expect(tooLong.body.errors?.[0].extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      errors: [{ field: 'expiresInHours' }],
    });
    const fresh = await link(post.id);
    const badComment = await rest('POST', `${base}/api/review/${fresh.token}/approve`, { comment: 42 });
    expect(badComment.status).toBe(400);
    expect(badComment.body.errors?.[0]?.field).toBe('comment');
    expect((await rest('GET', `${base}/api/content-ops/items/${post.id}`, undefined, alice)).body.status).toBe(
      'suggested',
    );
  });

  it('makes links only for suggestions inside the caller’s reach, with suggestions.write', async () => {
    const draft = (await rest('POST', `${base}/api/posts`, { content: 'a draft', brandId }, alice)).body;
    const { body } = await graphql(platform.urls.gateway, CREATE_LINK, { postId: draft.id }, alice);
    expect(body.errors?.[0].extensions?.code).toBe('CONFLICT');

    const otherBrand = (await ok(`mutation { createBrand(input: { name: "Other" }) { id } }`)).createBrand.id;
    const foreign = await suggestion('other brand', {}, otherBrand);
    const { createApiKey } = await ok(`mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }`, {
      input: { name: 'reviews', scopes: ['suggestions.write', 'posts.read'], brandIds: [brandId] },
    });
    const keyed = { 'x-api-key': createApiKey.key };
    const refused = await graphql(platform.urls.gateway, CREATE_LINK, { postId: foreign.id }, keyed);
    expect(refused.body.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    expect((await sql('select count(*)::int as n from social.review_link where post_id = ?', [foreign.id]))[0].n).toBe(
      0,
    );
    const inReach = await graphql<{ createReviewLink: { token: string } }>(
      platform.urls.gateway,
      CREATE_LINK,
      { postId: (await suggestion('own brand')).id },
      keyed,
    );
    expect(inReach.body.data?.createReviewLink.token).toBeTruthy();

    const reader = { authorization: `Bearer ${await platform.token('alice', ['suggestions.read'])}` };
    expect(
      (await graphql(platform.urls.gateway, CREATE_LINK, { postId: foreign.id }, reader)).body.errors?.[0].extensions
        ?.code,
    ).toBe('FORBIDDEN');
  });

  it('counts one limit per client for REST and GraphQL alike, IPv6 clients per /64', async () => {
    // Behind a trusted proxy (TRUST_PROXY=loopback) X-Forwarded-For names the client; each request comes
    // from another address of one /64, as one machine can pick them.
    const from = (n: number) => ({ 'x-forwarded-for': `2001:db8:5:6::${n.toString(16)}` });
    const SHOW = 'query ($token: String!) { reviewByToken(token: $token) { content } }';
    const APPROVE = 'mutation ($token: String!) { approveByReviewLink(token: $token) { status } }';
    for (let n = 1; n <= 30; n += 1) {
      expect((await rest('GET', `${base}/api/review/unknown-v6-${n}`, undefined, from(n))).status).toBe(404);
      const shown = await graphql(platform.urls.gateway, SHOW, { token: `unknown-v6-${n}` }, from(100 + n));
      expect(shown.body.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    }
    const limited = await rest('GET', `${base}/api/review/unknown-v6-x`, undefined, from(200));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    for (const query of [SHOW, APPROVE]) {
      const refused = await graphql(platform.urls.gateway, query, { token: 'unknown-v6-x' }, from(201));
      expect(refused.body.errors?.[0].extensions?.code).toBe('RATE_LIMITED');
    }
    expect((await rest('POST', `${base}/api/review/unknown-v6-x/reject`, {}, from(202))).status).toBe(429);
    // Another /64 is another client.
    expect(
      (await rest('GET', `${base}/api/review/unknown-v6-y`, undefined, { 'x-forwarded-for': '2001:db8:5:7::1' }))
        .status,
    ).toBe(404);
  });

  it('limits the public routes per client', async () => {
    let last = 0;
    for (let i = 0; i < 70 && last !== 429; i += 1)
      last = (await rest('GET', `${base}/api/review/unknown-${i}`)).status;
    expect(last).toBe(429);
  });
});
