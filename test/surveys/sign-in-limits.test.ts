import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { linkIn, MailCatcher } from './support.js';

const DOMAIN = 'field.example';
const LINK_PREFIX = 'https://app.example/auth/magic?';

/**
 * Sign-in requests from several clients for one address: behind a trusted proxy (TRUST_PROXY=loopback)
 * X-Forwarded-For names the client, as it would for people on different networks.
 */
describe('survey sign-in across clients', () => {
  let platform: TestPlatform;
  let base: string;
  const mail = new MailCatcher();
  const from = (client: string) => ({ 'x-forwarded-for': client });
  const requestLink = (email: string, client: string) =>
    rest('POST', `${base}/api/auth/magic/request`, { email }, from(client));
  const tokenOf = async (email: string, nth: number) =>
    linkIn(await mail.waitFor(email, nth), LINK_PREFIX)!.searchParams.get('token')!;
  const verify = (token: string) => rest('POST', `${base}/api/auth/magic/verify`, { token });

  beforeAll(async () => {
    await mail.start();
    platform = await startTestPlatform({
      TRUST_PROXY: 'loopback',
      SMTP_URL: `smtp://127.0.0.1:${mail.port}`,
      ALLOWED_EMAIL_DOMAINS: DOMAIN,
      MAGIC_LINK_BASE_URL: 'https://app.example/auth/magic',
    });
    base = platform.urls.surveysRest;
  });
  afterAll(async () => {
    await platform?.stop();
    await mail.stop();
  });

  it("counts a stranger's requests for an address against the stranger, not the address's owner", async () => {
    const victim = `victim@${DOMAIN}`;
    for (let i = 0; i < 5; i += 1) expect((await requestLink(victim, '203.0.113.66')).status).toBe(202);
    const stranger = await requestLink(victim, '203.0.113.66');
    expect(stranger.status).toBe(429);
    expect(stranger.body.detail).toBe('Too many sign-in requests for this address; try again later');

    expect((await requestLink(victim, '198.51.100.7')).status).toBe(202);
    expect((await verify(await tokenOf(victim, 6))).status).toBe(200);
  });

  it('leaves the link an owner received valid when someone else asks for another', async () => {
    const owner = `owner@${DOMAIN}`;
    expect((await requestLink(owner, '198.51.100.8')).status).toBe(202);
    const received = await tokenOf(owner, 1);
    expect((await requestLink(owner, '203.0.113.67')).status).toBe(202);
    const second = await tokenOf(owner, 2);

    const signedIn = await verify(received);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user.email).toBe(owner);
    // Links stay single-use, and signing in ends the address's other open links.
    expect((await verify(received)).status).toBe(401);
    expect((await verify(second)).status).toBe(401);
  });

  it('caps a flood from many clients at 50 requests per address', async () => {
    const flooded = `flooded@${DOMAIN}`;
    for (let client = 1; client <= 10; client += 1) {
      for (let i = 0; i < 5; i += 1) {
        const answer = await requestLink(flooded, `192.0.2.${client}`);
        expect({ client, i, status: answer.status }).toEqual({ client, i, status: 202 });
      }
    }
    const eleventh = await requestLink(flooded, '192.0.2.11');
    expect(eleventh.status).toBe(429);
    expect(Number(eleventh.headers.get('retry-after'))).toBeGreaterThan(0);
    // Other addresses from that client are served.
    expect((await requestLink(`other@${DOMAIN}`, '192.0.2.11')).status).toBe(202);
  });
});
