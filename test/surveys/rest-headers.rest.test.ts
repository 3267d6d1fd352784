import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { linksOf } from '#test/support/links.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { MailCatcher } from './support.js';

const DOMAIN = 'headers.example';

describe('surveys REST headers', () => {
  let platform: TestPlatform;
  let base: string;
  let surveyor: Record<string, string>;
  const mail = new MailCatcher();

  beforeAll(async () => {
    await mail.start();
    platform = await startTestPlatform({
      SMTP_URL: `smtp://127.0.0.1:${mail.port}`,
      ALLOWED_EMAIL_DOMAINS: DOMAIN,
      MAGIC_LINK_BASE_URL: 'https://app.example/auth/magic',
    });
    base = platform.urls.surveysRest;
    surveyor = { authorization: `Bearer ${await platform.token('surveyor', undefined, `surveyor@${DOMAIN}`)}` };
  });
  afterAll(async () => {
    await platform?.stop();
    await mail.stop();
  });

  it('answers a 201 with the Location of what it created', async () => {
    const created = await rest('POST', `${base}/api/surveys`, { venueName: 'Located venue' }, surveyor);
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/api/surveys/${created.body.id}`);
    const read = await rest('GET', `${base}${created.headers.get('location')}`, undefined, surveyor);
    expect(read.body.id).toBe(created.body.id);
  });

  it('links the pages of a list, keeping the other query parameters', async () => {
    for (let i = 0; i < 3; i += 1) {
      expect((await rest('POST', `${base}/api/surveys`, { venueName: `Paged ${i}` }, surveyor)).status).toBe(201);
    }
    const list = await rest('GET', `${base}/api/surveys?status=draft&limit=3&page=2`, undefined, surveyor);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ page: 2, limit: 3, total: 4 });
    expect(linksOf(list.headers.get('link'))).toEqual({
      first: '/api/surveys?status=draft&limit=3&page=1',
      prev: '/api/surveys?status=draft&limit=3&page=1',
      last: '/api/surveys?status=draft&limit=3&page=2',
    });
  });

  it('states each sign-in limit the subgraph counted on every answer, and Retry-After on a 429', async () => {
    const requestLink = () => rest('POST', `${base}/api/auth/magic/request`, { email: `limited@${DOMAIN}` });
    const first = await requestLink();
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ message: expect.any(String) });
    expect(first.headers.get('ratelimit-policy')).toBe(
      '"surveys-sign-in-client";q=30;w=900, "surveys-sign-in-address-client";q=5;w=900',
    );
    expect(first.headers.get('ratelimit')).toMatch(
      /^"surveys-sign-in-client";r=29;t=\d+, "surveys-sign-in-address-client";r=4;t=\d+$/,
    );
    for (let i = 0; i < 4; i += 1) expect((await requestLink()).status).toBe(202);
    const refused = await requestLink();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(
      /^"surveys-sign-in-client";r=24;t=\d+, "surveys-sign-in-address-client";r=0;t=[1-9]\d*$/,
    );
    expect(Object.keys(refused.body).sort()).toEqual(['code', 'detail', 'instance', 'status', 'title', 'type']);
  });

  it('answers a 401 with WWW-Authenticate: Bearer, naming a refused token or session invalid_token', async () => {
    const missing = await rest('GET', `${base}/api/surveys`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    const staleCookie = await rest('GET', `${base}/api/surveys`, undefined, { cookie: 'survey_session=gone' });
    expect(staleCookie.status).toBe(401);
    expect(staleCookie.headers.get('www-authenticate')).toBe('Bearer');
    const anonymousSession = await rest('GET', `${base}/api/auth/session`);
    expect(anonymousSession.headers.get('www-authenticate')).toBe('Bearer');
    for (const token of ['not.a.token', 'no-such-session']) {
      const refused = await rest('GET', `${base}/api/surveys`, undefined, { authorization: `Bearer ${token}` });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      expect(refused.body).toEqual(missing.body);
      const session = await rest('GET', `${base}/api/auth/session`, undefined, { authorization: `Bearer ${token}` });
      expect(session.status).toBe(401);
      expect(session.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      expect(session.body).toEqual(anonymousSession.body);
    }
  });
});
