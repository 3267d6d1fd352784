import 'reflect-metadata';
import { lookup } from 'node:dns/promises';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { graphql, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { sleep, until } from '#test/social-reach/helpers.js';
import { metricsRegistry } from '#lib/observability/metrics.js';
import { ContentEventType } from '#subgraphs/social/content/content-event.entity.js';
import { ContentEventService } from '#subgraphs/social/content/content-event.service.js';
import { Post, PostStatus } from '#subgraphs/social/content/post.entity.js';
import { checkWebhookUrl } from '#subgraphs/social/webhooks/webhook-address.js';
import { pruneWebhookHistory, RETRY_DELAYS_MS, withJitter } from '#subgraphs/social/webhooks/webhook.delivery.js';
import { sendWebhook } from '#subgraphs/social/webhooks/webhook.sender.js';
import { Receiver } from './receiver.js';

const CREATE_WEBHOOK = `mutation ($input: CreateWebhookInput!) {
  createWebhook(input: $input) { secret webhook { id url events brandIds enabled createdAt } }
}`;
const DELIVERIES =
  `query ($webhookId: ID!) {
  webhookDeliveries(webhookId: $webhookId, first: 50) { totalCount nodes { id eventId type attempt succeeded ` +
  `statusCode error durationMs attemptedAt responseExcerpt } }
}`;
const CREATE_POST = `mutation ($input: CreatePostInput!) { createPost(input: $input) { id brandId status } }`;

/**
 * Signed webhooks through the whole chain: a change over GraphQL, its audit event, the outbox
 * trigger, the dispatcher, pg-boss, and a real HTTP receiver on a local port that verifies every
 * signature with the standardwebhooks package's own verifier.
 */
describe('social webhooks', () => {
  let platform: TestPlatform;
  let gateway: string;
  let alice: Record<string, string>;
  const receiver = new Receiver();

  const settings = () => platform.subgraphs.social.runtime.webhooks;
  const sql = (text: string, params: unknown[] = []) =>
    platform.subgraphs.social.orm.em.fork().getConnection().execute(text, params);
  const gql = async <T = Record<string, any>>(query: string, variables: Record<string, unknown>, headers = alice) => {
    const { body } = await graphql<T>(gateway, query, variables, headers);
    return body;
  };
  const ok = async <T = Record<string, any>>(
    query: string,
    variables: Record<string, unknown> = {},
    headers = alice,
  ): Promise<T> => {
    const body = await gql<T>(query, variables, headers);
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data!;
  };
  const brand = async (name: string, headers = alice) =>
    (await ok(`mutation ($input: BrandInput!) { createBrand(input: $input) { id } }`, { input: { name } }, headers))
      .createBrand.id as string;
  let mainBrand: string;
  const post = async (input: Record<string, unknown>, headers = alice) =>
    (await ok(CREATE_POST, { input: { brandId: mainBrand, ...input } }, headers)).createPost as {
      id: string;
      brandId: string;
    };
  const webhook = async (input: Record<string, unknown>, headers = alice) =>
    (await ok(CREATE_WEBHOOK, { input: { url: receiver.url, ...input } }, headers)).createWebhook as {
      secret: string;
      webhook: { id: string; brandIds: string[] | null };
    };
  const deliveries = async (webhookId: string) =>
    (await ok(DELIVERIES, { webhookId })).webhookDeliveries.nodes as Array<Record<string, any>>;
  const verify = (secret: string, request: { body: string; headers: Record<string, string> }) =>
    new StandardWebhook(secret).verify(request.body, request.headers);

  beforeAll(async () => {
    await receiver.start();
    platform = await startTestPlatform({ WEB_URL: 'http://web.test' });
    gateway = platform.urls.gateway;
    alice = { authorization: `Bearer ${await platform.token('alice')}` };
    mainBrand = await brand('Main brand');
    // The production schedule spread over 31 hours; the same code on a schedule a test can watch.
    Object.assign(settings(), { timeoutMs: 1000, retryDelaysMs: [300, 300, 300], outboxPollMs: 200 });
  });

  afterAll(async () => {
    await platform?.stop();
    await receiver.stop();
  });

  it('makes a webhook whose secret is shown once and stored sealed', async () => {
    const created = await webhook({ events: ['post.created'], description: 'crm' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.webhook).toMatchObject({
      url: `${receiver.url}/`,
      events: ['post.created'],
      brandIds: null,
      enabled: true,
    });
    const listed = await ok('{ webhooks { id url description } }');
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    expect(listed.webhooks.find((w: { id: string }) => w.id === created.webhook.id)).toMatchObject({
      description: 'crm',
    });
    const [row] = await sql('select secret_sealed from social.webhook where id = ?', [created.webhook.id]);
    expect(row.secret_sealed).toMatch(/^v1\./);
    expect(row.secret_sealed).not.toContain(created.secret.slice(6, 20));
    await ok('mutation ($id: ID!) { deleteWebhook(id: $id) { deletedId } }', { id: created.webhook.id });
  });

  it('refuses unknown events and bad URLs naming the field, and needs the settings scopes', async () => {
    const unknown = await gql(CREATE_WEBHOOK, { input: { url: receiver.url, events: ['post.exploded'] } });
    expect(unknown.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ field: 'events' }] });
    const badUrl = await gql(CREATE_WEBHOOK, { input: { url: 'ftp://example.com/x', events: ['post.created'] } });
    expect(badUrl.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ field: 'url' }] });
    const reader = { authorization: `Bearer ${await platform.token('alice', ['settings.read'])}` };
    expect(
      (await gql(CREATE_WEBHOOK, { input: { url: receiver.url, events: ['post.created'] } }, reader)).errors?.[0]
        .extensions?.code,
    ).toBe('FORBIDDEN');
    expect((await gql('{ webhooks { id } }', {}, reader)).errors).toBeUndefined();
    const poster = { authorization: `Bearer ${await platform.token('alice', ['posts.write'])}` };
    expect((await gql('{ webhooks { id } }', {}, poster)).errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });

  it('delivers a signed Standard Webhooks message that the package verifier accepts', async () => {
    const { secret, webhook: hook } = await webhook({ events: ['post.created', 'post.suggested'] });
    const created = await post({ content: 'Hello webhooks', status: 'SUGGESTED', platforms: ['MASTODON'] });
    await until(async () => receiver.of('post.suggested', created.id).length > 0);
    const [request] = receiver.of('post.created', created.id);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const body = verify(secret, request) as { type: string; timestamp: string; data: Record<string, unknown> };
    expect(body).toMatchObject({
      type: 'post.created',
      data: {
        postId: created.id,
        brandId: created.brandId,
        status: 'suggested',
        content: 'Hello webhooks',
        platforms: ['mastodon'],
      },
    });
    expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
    // A tampered body or a wrong secret does not verify.
    expect(() => verify(secret, { ...request, body: request.body.replace('Hello', 'Hullo') })).toThrow();
    expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, request)).toThrow();
    const attempts = await deliveries(hook.id);
    expect(attempts.map((a) => a.type).sort()).toEqual(['post.created', 'post.suggested']);
    // Another user sees none of it.
    const bob = { authorization: `Bearer ${await platform.token('bob')}` };
    expect((await ok('{ webhooks { id } }', {}, bob)).webhooks).toEqual([]);
    expect((await gql(DELIVERIES, { webhookId: hook.id }, bob)).errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const foreignRedelivery = await gql(
      'mutation ($id: ID!) { redeliverWebhookEvent(deliveryId: $id) { id } }',
      { id: attempts[0].id },
      bob,
    );
    expect(foreignRedelivery.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    expect(attempts[0]).toMatchObject({ attempt: 1, succeeded: true, statusCode: 200, error: null });
    // The answer is read up to a cap and only its start is kept.
    expect(attempts[0].responseExcerpt.length).toBeLessThanOrEqual(256);
    await ok('mutation ($id: ID!) { deleteWebhook(id: $id) { deletedId } }', { id: hook.id });
  });

  it('retries after 500s and a timeout with the same webhook-id, and a slow receiver does not slow the API', async () => {
    const { secret, webhook: hook } = await webhook({ events: ['post.updated'] });
    const created = await post({ content: 'retry me' });
    receiver.plan(created.id, 500, 'hang', 503);
    const started = performance.now();
    await ok('mutation ($id: ID!, $input: UpdatePostInput!) { updatePost(id: $id, input: $input) { id } }', {
      id: created.id,
      input: { content: 'retry me now' },
    });
    expect(performance.now() - started).toBeLessThan(1000);
    const seen = await until(
      async () =>
        receiver.of('post.updated', created.id).length >= 4 ? receiver.of('post.updated', created.id) : null,
      30_000,
    );
    expect(new Set(seen.map((request) => request.headers['webhook-id'])).size).toBe(1);
    for (const request of seen) expect(verify(secret, request)).toMatchObject({ type: 'post.updated' });
    const attempts = await until(async () => {
      const list = await deliveries(hook.id);
      return list.length >= 4 ? list : null;
    });
    expect(attempts.map((a) => [a.attempt, a.succeeded, a.statusCode]).reverse()).toEqual([
      [1, false, 500],
      [2, false, null],
      [3, false, 503],
      [4, true, 200],
    ]);
    expect(attempts.find((a) => a.attempt === 2)!.error).toMatch(/no complete answer within 1 s/);
    const counted = await metricsRegistry.getSingleMetricAsString('webhook_deliveries_total');
    expect(counted).toMatch(/webhook_deliveries_total\{outcome="retrying"\} [1-9]/);
    expect(counted).toMatch(/webhook_deliveries_total\{outcome="succeeded"\} [1-9]/);
    expect(new Set(attempts.map((a) => a.eventId)).size).toBe(1);
    // Waits grew from the first failure on, roughly as scheduled.
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(200);
    await ok('mutation ($id: ID!) { deleteWebhook(id: $id) { deletedId } }', { id: hook.id });
  });

  it('marks an event failed after the last retry, and the redelivery sends it again with the same id', async () => {
    const { webhook: hook } = await webhook({ events: ['post.deleted'] });
    const created = await post({ content: 'doomed' });
    receiver.plan(created.id, 500, 500, 500, 500);
    await ok('mutation ($id: ID!) { deletePost(id: $id) { deletedId } }', { id: created.id });
    const attempts = await until(async () => {
      const list = await deliveries(hook.id);
      return list.length >= 4 ? list : null;
    }, 30_000);
    const [message] = await sql('select status, attempts from social.webhook_message where webhook_id = ?', [hook.id]);
    expect(message).toMatchObject({ status: 'failed', attempts: 4 });
    const before = receiver.of('post.deleted', created.id);
    const redelivered = await ok(
      'mutation ($id: ID!) { redeliverWebhookEvent(deliveryId: $id) { id eventId type status } }',
      { id: attempts[0].id },
    );
    expect(redelivered.redeliverWebhookEvent).toMatchObject({ type: 'post.deleted', eventId: attempts[0].eventId });
    await until(async () => receiver.of('post.deleted', created.id).length > before.length);
    expect(receiver.of('post.deleted', created.id).at(-1)!.headers['webhook-id']).toBe(before[0].headers['webhook-id']);
    const [after] = await until(async () => {
      const rows = await sql('select status, attempts from social.webhook_message where webhook_id = ?', [hook.id]);
      return rows[0].status === 'succeeded' ? rows : null;
    });
    expect(after.attempts).toBe(5);
    await ok('mutation ($id: ID!) { deleteWebhook(id: $id) { deletedId } }', { id: hook.id });
  });

  it('needs the scope that reads what an event carries to subscribe to it, point it elsewhere or send it again', async () => {
    const settingsOnly = {
      authorization: `Bearer ${await platform.token('alice', ['settings.read', 'settings.write'])}`,
    };
    const withPosts = {
      authorization: `Bearer ${await platform.token('alice', ['settings.read', 'settings.write', 'posts.read'])}`,
    };
    const refusal = (body: { errors?: Array<{ message: string; extensions?: Record<string, unknown> }> }) => ({
      code: body.errors?.[0].extensions?.code,
      message: body.errors?.[0].message,
    });
    const hooksBefore = (await sql('select count(*)::int as n from social.webhook'))[0].n as number;
    expect(
      refusal(await gql(CREATE_WEBHOOK, { input: { url: receiver.url, events: ['post.created'] } }, settingsOnly)),
    ).toEqual({
      code: 'FORBIDDEN',
      message: 'Sending post.created to a webhook needs the posts.read scope: a receiver reads what these events carry',
    });
    expect(
      refusal(
        await gql(CREATE_WEBHOOK, { input: { url: receiver.url, events: ['integration.needs_reconnect'] } }, withPosts),
      ).message,
    ).toMatch(/needs the integrations\.read scope/);
    expect((await sql('select count(*)::int as n from social.webhook'))[0].n).toBe(hooksBefore);

    // The owner's webhook, with 30 days of history behind it.
    const { webhook: hook } = await webhook({ events: ['post.created'] });
    const secretPost = await post({ content: 'not for settings keys' });
    const [attempt] = await until(async () => {
      const list = await deliveries(hook.id);
      return list.length ? list : null;
    });
    const elsewhere = `${receiver.url}/elsewhere`;
    const UPDATE =
      'mutation ($id: ID!, $input: UpdateWebhookInput!) { updateWebhook(id: $id, input: $input) { url events brandIds description } }';
    const REDELIVER = 'mutation ($id: ID!) { redeliverWebhookEvent(deliveryId: $id) { id } }';
    for (const input of [{ url: elsewhere }, { events: ['post.created', 'post.published'] }, { brandIds: [mainBrand] }])
      expect({ input, ...refusal(await gql(UPDATE, { id: hook.id, input }, settingsOnly)) }).toMatchObject({
        input,
        code: 'FORBIDDEN',
      });
    expect(refusal(await gql(REDELIVER, { id: attempt.id }, settingsOnly)).code).toBe('FORBIDDEN');
    // Nothing changed and nothing was sent again.
    const [stored] = await sql('select url, events, brand_ids from social.webhook where id = ?', [hook.id]);
    expect(stored).toEqual({ url: `${receiver.url}/`, events: ['post.created'], brand_ids: null });
    await sleep(600);
    expect(receiver.of('post.created', secretPost.id)).toHaveLength(1);

    // What hands a receiver nothing new stays settings.write's: a note, the same URL again, disabling.
    expect(
      (await ok(UPDATE, { id: hook.id, input: { description: 'crm', url: receiver.url } }, settingsOnly)).updateWebhook,
    ).toMatchObject({ description: 'crm', url: `${receiver.url}/` });
    // With posts.read the same key may point it elsewhere and send the event again.
    expect((await ok(UPDATE, { id: hook.id, input: { url: elsewhere } }, withPosts)).updateWebhook.url).toBe(elsewhere);
    await ok(REDELIVER, { id: attempt.id }, withPosts);
    await until(async () => receiver.of('post.created', secretPost.id).length === 2);
    await ok('mutation ($id: ID!) { deleteWebhook(id: $id) { deletedId } }', { id: hook.id }, settingsOnly);
  });

  it('sends nothing for a change that rolled back', async () => {
    const { webhook: hook } = await webhook({ events: ['post.created'] });
    const brandId = await brand('Rollback brand');
    const em = platform.subgraphs.social.orm.em.fork();
    const doomed = new Post();
    await expect(
      em.transactional(async (tx) => {
        Object.assign(doomed, { ownerId: 'alice', brandId, content: 'never happened', status: PostStatus.DRAFT });
        tx.persist(doomed);
        ContentEventService.record(tx, {
          post: doomed,
          type: ContentEventType.CREATED,
          actor: { type: 'user' as never, id: 'alice' },
          before: null,
        });
        await tx.flush();
        // The audit event and its outbox row exist inside the transaction...
        expect(
          (
            await tx
              .getConnection()
              .execute('select count(*)::int as n from social.webhook_outbox', [], 'all', tx.getTransactionContext())
          )[0].n,
        ).toBeGreaterThan(0);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const committed = await post({ content: 'this one happened', brandId });
    await until(async () => receiver.of('post.created', committed.id).length > 0);
    await sleep(600);
    expect(receiver.of('post.created', doomed.id)).toHaveLength(0);
    expect((await deliveries(hook.id)).every((attempt) => JSON.stringify(attempt).includes(doomed.id) === false)).toBe(
      true,
    );
    await ok('mutation ($id: ID!) { deleteWebhook(id: $id) { deletedId } }', { id: hook.id });
  });

  it("limits an API key's webhooks and their events to the key's brands", async () => {
    const own = await brand('Key brand');
    const other = await brand('Other brand');
    const { createApiKey } = await ok(`mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }`, {
      input: { name: 'hooks', scopes: ['settings.read', 'settings.write', 'posts.read'], brandIds: [own] },
    });
    const keyed = { 'x-api-key': createApiKey.key };
    const everyBrand = await webhook({ events: ['post.created'] });
    const refused = await gql(
      CREATE_WEBHOOK,
      { input: { url: receiver.url, events: ['post.created'], brandIds: [other] } },
      keyed,
    );
    expect(refused.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ field: 'brandIds' }] });
    const limited = await webhook({ events: ['post.created'] }, keyed);
    expect(limited.webhook.brandIds).toEqual([own]);
    const seenByKey = (await ok('{ webhooks { id } }', {}, keyed)).webhooks.map((w: { id: string }) => w.id);
    expect(seenByKey).toEqual([limited.webhook.id]);
    expect(
      (await gql('mutation ($id: ID!) { deleteWebhook(id: $id) { deletedId } }', { id: everyBrand.webhook.id }, keyed))
        .errors?.[0].extensions?.code,
    ).toBe('NOT_FOUND');

    const inOwn = await post({ content: 'own brand', brandId: own });
    const inOther = await post({ content: 'other brand', brandId: other });
    await until(
      async () =>
        receiver.of('post.created', inOther.id).length > 0 && receiver.of('post.created', inOwn.id).length >= 2,
    );
    await sleep(600);
    const toLimited = (await deliveries(limited.webhook.id)).map((a) => a.eventId);
    const limitedIds = new Set(
      receiver.received.filter((r) => verifies(limited.secret, r)).map((r) => JSON.parse(r.body).data.postId),
    );
    expect(limitedIds).toEqual(new Set([inOwn.id]));
    expect(toLimited).toHaveLength(1);
    for (const id of [everyBrand.webhook.id, limited.webhook.id])
      await ok('mutation ($id: ID!) { deleteWebhook(id: $id) { deletedId } }', { id });
  });

  it("tells post.failed from the publisher, with the platform and the attempt's error", async () => {
    const { secret, webhook: hook } = await webhook({ events: ['post.failed', 'post.published'] });
    const scheduledAt = new Date(Date.now() + 1500).toISOString();
    const queued = await post({ content: 'to nowhere', platforms: ['MASTODON'], scheduledAt });
    const [request] = await until(async () => {
      const found = receiver.of('post.failed', queued.id);
      return found.length ? found : null;
    }, 30_000);
    expect(verify(secret, request)).toMatchObject({
      type: 'post.failed',
      data: {
        postId: queued.id,
        status: 'failed',
        platform: 'mastodon',
        error: expect.stringContaining('no mastodon account is connected'),
        actor: { type: 'system', id: 'publisher' },
      },
    });
    expect(receiver.of('post.published', queued.id)).toHaveLength(0);
    await ok('mutation ($id: ID!) { deleteWebhook(id: $id) { deletedId } }', { id: hook.id });
  });

  it('tells integration.needs_reconnect to webhooks of every brand', async () => {
    const { secret } = await webhook({ events: ['integration.needs_reconnect'] });
    const id = '00000000-0000-4000-8000-00000000a11c';
    await sql(
      `insert into social.integration (id, owner_id, platform, status, account_id, account_name, access_token_sealed)
      values (?, 'alice', 'mastodon', 'connected', '1', 'alice', 'v1.x.y.z')`,
      [id],
    );
    await sql(`update social.integration set status = 'needs_reconnect', last_error = 'token revoked' where id = ?`, [
      id,
    ]);
    const [request] = await until(async () => {
      const found = receiver.received.filter((r) => JSON.parse(r.body).type === 'integration.needs_reconnect');
      return found.length ? found : null;
    });
    expect(verify(secret, request)).toMatchObject({
      data: { integrationId: id, platform: 'mastodon', accountName: 'alice', error: 'token revoked' },
    });
  });

  it('disables a webhook whose deliveries all failed for 5 days, saying why', async () => {
    const { webhook: hook } = await webhook({ events: ['post.created'] });
    await sql(`update social.webhook set failing_since = now() - interval '5 days 1 minute' where id = ?`, [hook.id]);
    receiver.plan('the last straw', 500);
    await post({ content: 'the last straw' });
    const [row] = await until(async () => {
      const rows = await sql('select enabled, disabled_reason from social.webhook where id = ?', [hook.id]);
      return rows[0].enabled === false ? rows : null;
    });
    expect(row.disabled_reason).toMatch(/every delivery failed from .* answered 500/);
    const listed = await ok('{ webhooks { id enabled disabledReason } }');
    expect(listed.webhooks.find((w: { id: string }) => w.id === hook.id)).toMatchObject({
      enabled: false,
      disabledReason: expect.stringContaining('answered 500'),
    });
    const enabled = await ok(
      'mutation ($id: ID!) { updateWebhook(id: $id, input: { enabled: true }) { enabled disabledReason failingSince } }',
      { id: hook.id },
    );
    expect(enabled.updateWebhook).toEqual({ enabled: true, disabledReason: null, failingSince: null });
    await ok('mutation ($id: ID!) { deleteWebhook(id: $id) { deletedId } }', { id: hook.id });
  });

  describe('in production mode', () => {
    afterAll(() => {
      settings().production = false;
    });

    it('refuses private addresses when saving, and at delivery time whatever the name resolves to', async () => {
      const { webhook: hook } = await webhook({ events: ['post.created'] });
      settings().production = true;
      for (const url of [
        receiver.url,
        `https://127.0.0.1/x`,
        'https://10.1.2.3/x',
        'https://[::1]/x',
        'https://169.254.169.254/latest',
        'https://localhost/x',
      ]) {
        const refused = await gql(CREATE_WEBHOOK, { input: { url, events: ['post.created'] } });
        expect(refused.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ field: 'url' }] });
      }
      // A name is judged by what it resolves to (this machine's own name resolves to a loopback address).
      const ownName = os.hostname();
      if (
        (await lookup(ownName, { all: true })).some(({ address }) => address.startsWith('127.') || address === '::1')
      ) {
        const byName = await gql(CREATE_WEBHOOK, { input: { url: `https://${ownName}/x`, events: ['post.created'] } });
        expect(byName.errors?.[0].extensions).toMatchObject({
          code: 'BAD_USER_INPUT',
          errors: [{ field: 'url', message: expect.stringContaining('resolves to') }],
        });
      }
      const before = receiver.received.length;
      const created = await post({ content: 'not to a private address' });
      const [attempt] = await until(async () => {
        const list = await deliveries(hook.id);
        return list.length ? list : null;
      });
      expect(attempt).toMatchObject({ succeeded: false, statusCode: null });
      expect(attempt.error).toMatch(/refused/);
      expect(receiver.received.length).toBe(before);
      expect(receiver.of('post.created', created.id)).toHaveLength(0);
      await ok('mutation ($id: ID!) { deleteWebhook(id: $id) { deletedId } }', { id: hook.id });
    });

    it('checks the address a name resolves to when connecting (DNS rebinding), and follows no redirect', async () => {
      const port = new URL(receiver.url).port;
      const production = { production: true, timeoutMs: 1000 };
      const byName = await sendWebhook(
        {
          url: `https://localhost:${port}/`,
          secret: `whsec_${Buffer.alloc(24).toString('base64')}`,
          id: 'x',
          body: '{}',
        },
        production,
      );
      expect(byName.error).toMatch(/refused: localhost resolves to .*loopback/);
      expect(checkWebhookUrl('https://hooks.example.com/in', { production: true })).toBe(
        'https://hooks.example.com/in',
      );
      settings().production = false;
      receiver.plan('redirect-me', 302);
      const redirected = await sendWebhook(
        {
          url: receiver.url,
          secret: `whsec_${Buffer.alloc(24).toString('base64')}`,
          id: 'y',
          body: '{"type":"redirect-me","data":{}}',
        },
        { production: false, timeoutMs: 1000 },
      );
      expect(redirected).toMatchObject({
        succeeded: false,
        statusCode: 302,
        error: expect.stringContaining('not followed'),
      });
    });
  });

  it('keeps 30 days of history: older attempts and finished events are pruned, pending ones stay', async () => {
    const count = async (table: string, where = 'true') =>
      (await sql(`select count(*)::int as n from social.${table} where ${where}`))[0].n as number;
    await sql(`insert into social.webhook_message (id, webhook_id, owner_id, event_id, type, body, status, created_at)
      select gen_random_uuid(), id, owner_id, gen_random_uuid(), 'post.created', '{}', 'pending', now() - interval '40 days' from social.webhook limit 1`);
    expect(await count('webhook_delivery')).toBeGreaterThan(0);
    await pruneWebhookHistory(platform.subgraphs.social.orm.em.fork(), new Date(Date.now() + 31 * 24 * 3600_000));
    expect(await count('webhook_delivery')).toBe(0);
    expect(await count('webhook_message', "status <> 'pending'")).toBe(0);
    expect(await count('webhook_message', "status = 'pending'")).toBeGreaterThan(0);
  });

  it('spreads retries by at most 20 % around the schedule', () => {
    expect(RETRY_DELAYS_MS.map((ms) => ms / 1000)).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400]);
    expect(withJitter(1000, () => 0)).toBe(800);
    expect(withJitter(1000, () => 0.999999)).toBe(1200);
  });
});

function verifies(secret: string, request: { body: string; headers: Record<string, string> }): boolean {
  try {
    new StandardWebhook(secret).verify(request.body, request.headers);
    return true;
  } catch {
    return false;
  }
}
