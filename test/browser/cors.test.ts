import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import {
  describeInBrowser,
  launchBrowser,
  serveBlankPage,
  type Browser,
  type WebOrigin,
} from '#test/support/browser.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { linkIn, MailCatcher } from '#test/surveys/support.js';

interface PageFetch {
  status?: number;
  body?: any;
  location?: string | null;
  requestId?: string | null;
  /** The answer's headers named in `read`, as the page's script sees them (null: hidden from it, or absent). */
  read?: Record<string, string | null>;
  /** Set when the browser refused the call: the page never sees an answer. */
  refused?: string;
}

interface PageInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  credentials?: 'include' | 'omit';
  /** Sent instead of `body` as multipart/form-data, the way a page uploads a file it was given. */
  file?: { field: string; name: string; type: string; text: string };
}

/** `fetch` run by the page itself, so the browser applies CORS exactly as it does for a frontend. */
function pageFetch(page: Page, url: string, init: PageInit = {}, read: string[] = []): Promise<PageFetch> {
  return page.evaluate(
    async ({ url, init, read }) => {
      const { file, ...request } = init;
      const form = file ? new FormData() : undefined;
      if (file) form?.append(file.field, new Blob([file.text], { type: file.type }), file.name);
      try {
        const response = await fetch(url, form ? { ...request, body: form } : request);
        const text = await response.text();
        return {
          status: response.status,
          body: text ? JSON.parse(text) : null,
          location: response.headers.get('location'),
          requestId: response.headers.get('x-request-id'),
          ...(read.length ? { read: Object.fromEntries(read.map((name) => [name, response.headers.get(name)])) } : {}),
        };
      } catch (error) {
        return { refused: String(error) };
      }
    },
    { url, init, read },
  );
}

const json = (body: unknown) => ({ 'content-type': 'application/json', body: JSON.stringify(body) });

describeInBrowser('a frontend in a real browser (Chromium), across origins', () => {
  let platform: TestPlatform;
  let browser: Browser;
  let allowed: WebOrigin;
  let stranger: WebOrigin;
  let frontend: Page;
  let strangerPage: Page;
  let bearer: string;
  const mail = new MailCatcher();

  beforeAll(async () => {
    await mail.start();
    allowed = await serveBlankPage();
    stranger = await serveBlankPage();
    platform = await startTestPlatform({
      CORS_ORIGINS: allowed.origin,
      SMTP_URL: `smtp://127.0.0.1:${mail.port}`,
      MAGIC_LINK_BASE_URL: `${allowed.origin}/auth/magic`,
    });
    bearer = `Bearer ${await platform.token('browser-user')}`;
    browser = await launchBrowser();
    frontend = await browser.context.newPage();
    await frontend.goto(`${allowed.origin}/`);
    strangerPage = await browser.context.newPage();
    await strangerPage.goto(`${stranger.origin}/`);
  });
  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
    await allowed?.close();
    await stranger?.close();
    await mail.stop();
  });

  const graphqlQuery = () => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ contacts(first: 1) { totalCount } }' }),
    credentials: 'include' as const,
  });

  it('runs a GraphQL query through the gateway from an allowed origin', async () => {
    const answer = await pageFetch(frontend, platform.urls.gateway, graphqlQuery());
    expect(answer.refused).toBeUndefined();
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { contacts: { totalCount: expect.any(Number) } } });
  });

  it('calls REST with a bearer token and reads the exposed Location and X-Request-Id', async () => {
    const { body, ...headers } = json({ content: 'Written in a browser' });
    const created = await pageFetch(frontend, `${platform.urls.socialRest}/api/posts`, {
      method: 'POST',
      headers: { authorization: bearer, 'x-request-id': 'from-the-page', ...headers },
      body,
    });
    expect(created.refused).toBeUndefined();
    expect(created.status).toBe(201);
    expect(created.location).toBe(`/api/posts/${created.body.id}`);
    expect(created.requestId).toBe('from-the-page');
    const listed = await pageFetch(frontend, `${platform.urls.socialRest}/api/posts`, {
      headers: { authorization: bearer },
    });
    expect(listed.body.data.map((post: { content: string }) => post.content)).toContain('Written in a browser');
  });

  it('retries a write safely by Idempotency-Key and reads Idempotent-Replayed on the replay', async () => {
    const key = randomUUID();
    const create = () =>
      pageFetch(
        frontend,
        `${platform.urls.contactsRest}/api/contacts`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ firstName: 'Retried', email: 'retried@example.com' }),
        },
        ['idempotent-replayed', 'etag'],
      );
    const first = await create();
    expect(first.refused).toBeUndefined();
    expect(first.status).toBe(201);
    expect(first.read?.['idempotent-replayed']).toBeNull();
    const replay = await create();
    expect(replay.status).toBe(201);
    expect(replay.body.id).toBe(first.body.id);
    expect(replay.read?.['idempotent-replayed']).toBe('true');
  });

  it('reads a contact’s ETag and changes it only with a matching If-Match, asks again with If-None-Match', async () => {
    const contacts = platform.urls.contactsRest;
    const created = await rest('POST', `${contacts}/api/contacts`, { firstName: 'Versioned', company: 'Start' });
    const url = `${contacts}/api/contacts/${created.body.id}`;
    const read = await pageFetch(frontend, url, {}, ['etag']);
    expect(read.refused).toBeUndefined();
    const etag = read.read?.etag;
    expect(etag).toMatch(/^"\d+"$/);
    const unchanged = await pageFetch(frontend, url, { headers: { 'if-none-match': etag! } });
    expect(unchanged.status).toBe(304);
    const change = (company: string, ifMatch: string) =>
      pageFetch(
        frontend,
        url,
        {
          method: 'PUT',
          headers: { 'content-type': 'application/json', 'if-match': ifMatch },
          body: JSON.stringify({ company }),
        },
        ['etag'],
      );
    const changed = await change('Matched', etag!);
    expect(changed.status).toBe(200);
    expect(changed.read?.etag).toMatch(/^"\d+"$/);
    expect(changed.read?.etag).not.toBe(etag);
    const stale = await change('Stale', etag!);
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({ code: 'PRECONDITION_FAILED' });
  });

  it('imports contacts in the background with Prefer: respond-async and reads Preference-Applied and Location', async () => {
    const started = await pageFetch(
      frontend,
      `${platform.urls.contactsRest}/api/contacts/import`,
      {
        method: 'POST',
        headers: { prefer: 'respond-async' },
        file: {
          field: 'file',
          name: 'contacts.csv',
          type: 'text/csv',
          text: 'firstName,email\nImported,imported@example.com',
        },
      },
      ['preference-applied'],
    );
    expect(started.refused).toBeUndefined();
    expect(started.status).toBe(202);
    expect(started.read?.['preference-applied']).toBe('respond-async');
    expect(started.location).toBe(`/api/contacts/import/${started.body.id}`);
  });

  it('signs in by magic link and the session cookie then goes along on GET /api/auth/session', async () => {
    const surveys = platform.urls.surveysRest;
    const email = 'browser@example.com';
    const { body: requestBody, ...requestHeaders } = json({ email });
    const requested = await pageFetch(frontend, `${surveys}/api/auth/magic/request`, {
      method: 'POST',
      headers: requestHeaders,
      body: requestBody,
      credentials: 'include',
    });
    expect(requested.status).toBe(202);
    const token = linkIn(await mail.waitFor(email), `${allowed.origin}/auth/magic?`)?.searchParams.get('token');
    expect(token).toBeTruthy();

    const { body: verifyBody, ...verifyHeaders } = json({ token });
    const verified = await pageFetch(frontend, `${surveys}/api/auth/magic/verify`, {
      method: 'POST',
      headers: verifyHeaders,
      body: verifyBody,
      credentials: 'include',
    });
    expect(verified.status).toBe(200);
    const cookie = (await browser.context.cookies(surveys)).find((candidate) => candidate.name === 'survey_session');
    // localhost on two ports is one site: the Lax cookie set by the sign-in is sent on the page's later calls.
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax' });

    const session = await pageFetch(frontend, `${surveys}/api/auth/session`, { credentials: 'include' });
    expect(session.status).toBe(200);
    expect(session.body.user).toEqual({ email, isAdmin: false });
    // The cookie, and nothing else, is the credential: without it the same call is anonymous.
    const withoutCookie = await pageFetch(frontend, `${surveys}/api/auth/session`, { credentials: 'omit' });
    expect(withoutCookie.status).toBe(401);
  });

  it('refuses the same calls from an origin that is not allowed, and the refused writes never reach the platform', async () => {
    const postsBefore = (
      await rest('GET', `${platform.urls.socialRest}/api/posts`, undefined, { authorization: bearer })
    ).body.total;
    const { body, ...headers } = json({ content: 'Written by a stranger' });
    const refused = [
      await pageFetch(strangerPage, platform.urls.gateway, graphqlQuery()),
      await pageFetch(strangerPage, `${platform.urls.socialRest}/api/posts`, {
        method: 'POST',
        headers: { authorization: bearer, ...headers },
        body,
      }),
      await pageFetch(strangerPage, `${platform.urls.socialRest}/api/posts`, { headers: { authorization: bearer } }),
      await pageFetch(strangerPage, `${platform.urls.surveysRest}/api/auth/magic/request`, {
        method: 'POST',
        ...json({ email: 'stranger@example.com' }),
        headers: { 'content-type': 'application/json' },
        credentials: 'include',
      }),
      // The browser holds a session cookie for localhost by now; still the stranger's page reads nothing.
      await pageFetch(strangerPage, `${platform.urls.surveysRest}/api/auth/session`, { credentials: 'include' }),
    ];
    for (const answer of refused) expect(answer).toEqual({ refused: expect.stringMatching(/Failed to fetch/) });
    const postsAfter = (
      await rest('GET', `${platform.urls.socialRest}/api/posts`, undefined, { authorization: bearer })
    ).body.total;
    expect(postsAfter).toBe(postsBefore);
    expect(mail.mails.filter((sent) => sent.to.includes('stranger@example.com'))).toEqual([]);
  });
});
