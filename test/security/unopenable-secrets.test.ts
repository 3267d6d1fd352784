import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TokenCipher } from '#subgraphs/social/integrations/token-cipher.js';
import { LogCollector } from '#test/support/logs.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { freePort } from '#test/support/ports.js';
import { FakePlatform } from '#test/social-reach/fake-platforms.js';
import { browserOf, fakePlatformEnv, until } from '#test/social-reach/helpers.js';
import { Receiver } from '#test/social-webhooks/receiver.js';

/**
 * A sealed value that no key of ENCRYPTION_KEY opens (sealed under a key since dropped from the list)
 * is reported, naming what it belongs to, and never crashes a part nor stalls a job: a publish fails
 * saying the integration needs reconnecting (and marks it so), a webhook's delivery is a failed attempt
 * naming the webhook, a connect's callback is refused with the advice to start again.
 */
describe('a sealed value no key opens', () => {
  let platform: TestPlatform;
  let base: string;
  let alice: Record<string, string>;
  const sink = new LogCollector();
  const mastodon = new FakePlatform('mastodon', 'unopenable-client', 'unopenable-secret');
  const receiver = new Receiver();
  /** A key that is not in ENCRYPTION_KEY: what a dropped key sealed. */
  const dropped = new TokenCipher(randomBytes(32));
  const sql = (text: string, params: unknown[] = []) =>
    platform.subgraphs.social.orm.em.fork().getConnection().execute(text, params);

  beforeAll(async () => {
    await Promise.all([mastodon.start(), receiver.start()]);
    const env = { ...fakePlatformEnv(await freePort(), { mastodon }), LOG_LEVEL: 'warn', LOG_FORMAT: 'json' };
    platform = await startTestPlatform(env, { logStream: sink });
    base = platform.urls.socialRest;
    alice = { authorization: `Bearer ${await platform.token('alice')}` };
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await Promise.all([mastodon.stop(), receiver.stop()]);
  });

  it('fails the publish naming the integration, which then needs reconnecting', async () => {
    const start = await rest('GET', `${base}/api/integrations/mastodon/connect`, undefined, alice);
    const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    expect((await rest('GET', authorize.headers.get('location')!, undefined, browserOf(start))).status).toBe(302);
    const [{ id }] = await sql(`select id from social.integration where platform = 'mastodon'`);
    await sql('update social.integration set access_token_sealed = ? where id = ?', [
      dropped.seal('a token of long ago', `integration:${id}:access`),
      id,
    ]);

    const created = await rest(
      'POST',
      `${base}/api/posts`,
      {
        content: 'Sealed under a dropped key',
        platforms: ['mastodon'],
        scheduledAt: new Date(Date.now() + 1000).toISOString(),
      },
      alice,
    );
    expect(created.status).toBe(201);
    const settled = await until(async () => {
      const item = (await rest('GET', `${base}/api/content-ops/items/${created.body.id}`, undefined, alice)).body;
      return ['published', 'failed'].includes(item.status) ? item : null;
    }, 60_000);
    expect(settled.status).toBe('failed');
    expect(settled.attempts[0].error).toMatch(new RegExp(`needs to be reconnected.*integration ${id}`));
    const [integration] = await sql('select status, last_error from social.integration where id = ?', [id]);
    expect(integration.status).toBe('needs_reconnect');
    expect(integration.last_error).toContain(`integration ${id}`);
    expect(sink.lines).toContainEqual(
      expect.objectContaining({
        level: 50,
        msg: 'a platform token opens with no key: the integration needs reconnecting',
        integrationId: id,
        reason: expect.stringContaining('ENCRYPTION_KEY'),
      }),
    );
    expect(mastodon.posts).toHaveLength(0);
  }, 90_000);

  it("refuses a connect's callback whose verifier no key opens, asking to start again, and says so in the log", async () => {
    const start = await rest('GET', `${base}/api/integrations/mastodon/connect`, undefined, alice);
    const [pending] = await sql(
      `select id from social.oauth_state where used_at is null order by expires_at desc limit 1`,
    );
    await sql('update social.oauth_state set code_verifier_sealed = ? where id = ?', [
      dropped.seal('a verifier of long ago', 'any'),
      pending.id,
    ]);
    const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    const callback = await rest('GET', authorize.headers.get('location')!, undefined, browserOf(start));
    expect(callback.status).toBe(400);
    expect(JSON.stringify(callback.body)).toContain('start connecting again');
    expect(sink.lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        pendingConnectId: pending.id,
        msg: expect.stringContaining('ENCRYPTION_KEY'),
      }),
    );
  });

  it('records a webhook delivery that cannot be signed as a failed attempt naming the webhook, and logs an error', async () => {
    const made = await graphql<{ createWebhook: { webhook: { id: string } } }>(
      platform.urls.gateway,
      'mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { webhook { id } } }',
      { input: { url: receiver.url, events: ['post.created'] } },
      alice,
    );
    const id = made.body.data!.createWebhook.webhook.id;
    await sql('update social.webhook set secret_sealed = ? where id = ?', [dropped.seal('whsec_long_ago', id), id]);
    const created = await rest('POST', `${base}/api/posts`, { content: 'Signed with a dropped key' }, alice);
    expect(created.status).toBe(201);
    const attempt = await until(
      async () => (await sql('select error from social.webhook_delivery where webhook_id = ?', [id]))[0],
      30_000,
    );
    expect(attempt.error).toContain(`webhook ${id}`);
    expect(sink.lines).toContainEqual(
      expect.objectContaining({
        level: 50,
        msg: 'webhook secret opens with no key',
        reason: expect.stringContaining(`webhook ${id}`),
      }),
    );
    expect(receiver.received).toHaveLength(0);
  }, 60_000);
});
