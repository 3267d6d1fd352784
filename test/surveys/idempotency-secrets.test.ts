import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { linkIn, MailCatcher } from './support.js';

const DOMAIN = 'once.example';
const LINK_PREFIX = 'https://app.example/auth/magic?';

/**
 * A sign-in link signs in once, Idempotency-Key or not: the session it opens is a secret shown once,
 * so its answer (and its cookie) is never kept for a replay, and the records hold no session token.
 */
describe.each([
  { label: 'PostgreSQL (or PGlite when TEST_DATABASE_URL is unset)', embedded: false },
  { label: 'embedded PGlite', embedded: true },
])('surveys Idempotency-Key and secrets on $label', ({ embedded }) => {
  let platform: TestPlatform;
  let base: string;
  const mail = new MailCatcher();

  beforeAll(async () => {
    await mail.start();
    platform = await startTestPlatform(
      {
        SMTP_URL: `smtp://127.0.0.1:${mail.port}`,
        ALLOWED_EMAIL_DOMAINS: DOMAIN,
        MAGIC_LINK_BASE_URL: 'https://app.example/auth/magic',
      },
      { embedded },
    );
    base = platform.urls.surveysRest;
  });
  afterAll(async () => {
    await platform?.stop();
    await mail.stop();
  });

  const sql = (text: string, params: unknown[] = []) =>
    platform.subgraphs.surveys.orm.em.fork().getConnection().execute(text, params);

  const mailedToken = async (email: string) => {
    expect((await rest('POST', `${base}/api/auth/magic/request`, { email })).status).toBe(202);
    return linkIn(await mail.waitFor(email), LINK_PREFIX)!.searchParams.get('token')!;
  };

  it('answers a spent link sent again under the same key with 409, never the session again', async () => {
    const email = `once-${randomUUID().slice(0, 8)}@${DOMAIN}`;
    const token = await mailedToken(email);
    const key = randomUUID();
    const verify = () => rest('POST', `${base}/api/auth/magic/verify`, { token }, { 'idempotency-key': key });
    const first = await verify();
    expect(first.status).toBe(200);
    const session = first.body.token as string;
    expect(session).toBeTruthy();

    const again = await verify();
    expect(again.status).toBe(409);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(JSON.stringify(again.body)).not.toContain(session);
    expect(again.body).toMatchObject({ code: 'CONFLICT' });
    expect(again.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.stringContaining('secret') }]);
    // Without the key, the spent link is refused as always.
    expect((await rest('POST', `${base}/api/auth/magic/verify`, { token })).status).toBe(401);

    const kept = await sql('select state, answer from surveys.idempotency_key where key = ?', [key]);
    expect(kept).toEqual([{ state: 'done', answer: null }]);
    expect(JSON.stringify(await sql('select * from surveys.idempotency_key'))).not.toContain(session);
  });

  it("keeps a session's records apart from an identity token of the same surveyor", async () => {
    const email = `both-${randomUUID().slice(0, 8)}@${DOMAIN}`;
    const session = (await rest('POST', `${base}/api/auth/magic/verify`, { token: await mailedToken(email) })).body
      .token as string;
    const bearer = await platform.token(`sub-${email}`, undefined, email);
    const key = randomUUID();
    const body = { venueName: `Venue ${key}` };
    const bySession = await rest('POST', `${base}/api/surveys`, body, {
      authorization: `Bearer ${session}`,
      'idempotency-key': key,
    });
    expect(bySession.status).toBe(201);
    const byToken = await rest('POST', `${base}/api/surveys`, body, {
      authorization: `Bearer ${bearer}`,
      'idempotency-key': key,
    });
    expect(byToken.headers.get('idempotent-replayed')).toBeNull();
    const callers = (await sql('select caller from surveys.idempotency_key where key = ?', [key])) as {
      caller: string;
    }[];
    expect(callers.map((row) => row.caller.split(':')[0]).sort()).toEqual(['bearer', 'session']);
  });
});
