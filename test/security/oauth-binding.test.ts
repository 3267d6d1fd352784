import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { freePort } from '#test/support/ports.js';
import { FakePlatform } from '#test/social-reach/fake-platforms.js';
import { browserOf, fakePlatformEnv } from '#test/social-reach/helpers.js';

/**
 * The attack: Mallory starts a connect and sends the platform's authorization page to Victor. Victor,
 * signed in at the platform, approves, and his browser follows the redirect to our callback. Were the
 * state bound only to Mallory's user, Victor's platform account would now post for Mallory.
 */
describe('OAuth connect is bound to the browser that started it', () => {
  let platform: TestPlatform;
  let base: string;
  const mastodon = new FakePlatform('mastodon', 'masto-client', 'masto-secret');
  const mallory = async () => ({ authorization: `Bearer ${await platform.token('mallory')}` });
  const integrationsOf = async (owner: string) =>
    platform.subgraphs.social.orm.em
      .fork()
      .getConnection()
      .execute('select platform from social.integration where owner_id = ?', [owner]);

  beforeAll(async () => {
    await mastodon.start();
    const port = await freePort();
    platform = await startTestPlatform({
      ...fakePlatformEnv(port, { mastodon }),
      WEB_URL: 'http://web.test/app',
    });
    base = platform.urls.socialRest;
  });
  afterAll(async () => {
    await platform?.stop();
    await mastodon.stop();
  });

  it('sets an HttpOnly, SameSite=Lax nonce cookie at connect', async () => {
    const start = await rest('GET', `${base}/api/integrations/mastodon/connect`, undefined, await mallory());
    const cookie = start.headers.getSetCookie().find((value) => value.startsWith('oauth_connect='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\/api\/integrations/);
  });

  it('refuses the callback in another browser (the REST connect link sent to a victim), storing nothing', async () => {
    const start = await rest('GET', `${base}/api/integrations/mastodon/connect`, undefined, await mallory());
    const approved = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    // Victor's browser: no cookie of Mallory's.
    const victim = await rest('GET', approved.headers.get('location')!);
    expect(victim.status).toBe(400);
    expect(victim.body.errors).toEqual([
      { field: 'state', message: 'was issued to another browser; start connecting again in this one' },
    ]);
    expect(await integrationsOf('mallory')).toEqual([]);
  });

  it('refuses the callback of a connect started through GraphQL, whatever cookie comes along', async () => {
    const binding = 'a'.repeat(64);
    const started = await graphql(
      platform.urls.gateway,
      'mutation ($b: String!) { startIntegrationConnect(platform: MASTODON, browserBinding: $b) { authorizeUrl } }',
      { b: binding },
      await mallory(),
    );
    const approved = await fetch(
      (started.body.data as { startIntegrationConnect: { authorizeUrl: string } }).startIntegrationConnect.authorizeUrl,
      { redirect: 'manual' },
    );
    const victim = await rest('GET', approved.headers.get('location')!, undefined, {
      cookie: 'oauth_connect=some-other-nonce',
    });
    expect(victim.status).toBe(400);
    expect(await integrationsOf('mallory')).toEqual([]);
  });

  it("checks the browser before using up the state: a stranger's callback leaves the owner's connect intact", async () => {
    const alice = { authorization: `Bearer ${await platform.token('alice')}` };
    const start = await rest('GET', `${base}/api/integrations/mastodon/connect`, undefined, alice);
    const approved = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    const callback = approved.headers.get('location')!;
    // Someone who saw the state tries it first, without Alice's cookie: refused, and nothing used.
    const stranger = await rest('GET', callback);
    expect(stranger.status).toBe(400);
    expect(stranger.body.errors).toEqual([
      { field: 'state', message: 'was issued to another browser; start connecting again in this one' },
    ]);
    const own = await rest('GET', callback, undefined, browserOf(start));
    expect(own.status).toBe(302);
    expect(own.headers.get('location')).toContain('status=connected');
    expect(await integrationsOf('alice')).toEqual([{ platform: 'mastodon' }]);
    // Single-use still: the same callback again is refused.
    const again = await rest('GET', callback, undefined, browserOf(start));
    expect(again.body.errors).toEqual([{ field: 'state', message: 'has already been used' }]);
  });

  it("needs the starting browser on the platform's error= answer too, and only then ends the connect", async () => {
    const bob = { authorization: `Bearer ${await platform.token('bob')}` };
    const start = await rest('GET', `${base}/api/integrations/mastodon/connect`, undefined, bob);
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
    const refusedAt = `${base}/api/integrations/mastodon/callback?state=${encodeURIComponent(state)}&error=access_denied`;
    const stranger = await rest('GET', refusedAt);
    expect(stranger.status).toBe(400);
    expect(stranger.body.errors).toEqual([
      { field: 'state', message: 'was issued to another browser; start connecting again in this one' },
    ]);
    const own = await rest('GET', refusedAt, undefined, browserOf(start));
    expect(own.status).toBe(302);
    expect(own.headers.get('location')).toContain('status=error');
    expect((await rest('GET', refusedAt, undefined, browserOf(start))).body.errors).toEqual([
      { field: 'state', message: 'has already been used' },
    ]);
  });

  it('completes in the browser that started it', async () => {
    const start = await rest('GET', `${base}/api/integrations/mastodon/connect`, undefined, await mallory());
    const approved = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    const own = await rest('GET', approved.headers.get('location')!, undefined, browserOf(start));
    expect(own.status).toBe(302);
    expect(own.headers.get('location')).toContain('status=connected');
    expect(own.headers.getSetCookie().some((value) => value.startsWith('oauth_connect=;'))).toBe(true);
    expect(await integrationsOf('mallory')).toEqual([{ platform: 'mastodon' }]);
  });
});
