import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { MailCatcher } from './support.js';

const DOMAIN = 'idempotent.example';

describe('surveys Idempotency-Key', () => {
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

  it('creates a survey once per key, and answers the same again', async () => {
    const key = randomUUID();
    const send = () =>
      rest('POST', `${base}/api/surveys`, { venueName: `Venue ${key}` }, { ...surveyor, 'idempotency-key': key });
    const first = await send();
    expect(first.status).toBe(201);
    const again = await send();
    expect({ status: again.status, body: again.body, replayed: again.headers.get('idempotent-replayed') }).toEqual({
      status: 201,
      body: first.body,
      replayed: 'true',
    });
    const list = await rest('GET', `${base}/api/surveys?limit=100`, undefined, surveyor);
    expect(list.body.data.filter((survey: { venueName: string }) => survey.venueName === `Venue ${key}`)).toHaveLength(
      1,
    );
  });

  it('sends one sign-in mail for a request repeated without credentials (the caller is the client address)', async () => {
    const key = randomUUID();
    const email = `once-${key.slice(0, 8)}@${DOMAIN}`;
    const send = () => rest('POST', `${base}/api/auth/magic/request`, { email }, { 'idempotency-key': key });
    const first = await send();
    expect(first.status).toBe(202);
    const again = await send();
    expect({ status: again.status, body: again.body }).toEqual({ status: 202, body: first.body });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mail.mails.filter((sent) => sent.to.includes(email))).toHaveLength(1);
  });
});
