import 'reflect-metadata';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import {
  describeInBrowser,
  launchBrowser,
  serveBlankPage,
  type Browser,
  type WebOrigin,
} from '#test/support/browser.js';
import { LogCollector } from '#test/support/logs.js';
import { startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { linkIn, MailCatcher } from '#test/surveys/support.js';

const ALLOWED_DOMAIN = 'field.example';
const URQL_ACCEPT =
  'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed';

/** The page's own `fetch`, so Chromium adds Fetch Metadata, Origin and cookies exactly as for a frontend. */
function pageFetch(
  page: Page,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; credentials?: 'include' },
): Promise<{ status?: number; body?: any; refused?: string }> {
  return page.evaluate(
    async ({ url, init }) => {
      try {
        const response = await fetch(url, init);
        return { status: response.status, body: await response.json() };
      } catch (error) {
        return { refused: String(error) };
      }
    },
    { url, init },
  );
}

describeInBrowser('a GraphQL-only frontend in a real browser (Chromium)', () => {
  let platform: TestPlatform;
  let browser: Browser;
  let web: WebOrigin;
  let foreign: WebOrigin;
  let frontend: Page;
  let foreignPage: Page;
  /** The gateway as the frontend's site names it: `localhost`, the same site as the page (a site ignores ports). */
  let gateway: string;
  const mail = new MailCatcher();
  const logs = new LogCollector();

  beforeAll(async () => {
    await mail.start();
    web = await serveBlankPage();
    foreign = await serveBlankPage();
    platform = await startTestPlatform(
      {
        LOG_LEVEL: 'info',
        CORS_ORIGINS: web.origin,
        SMTP_URL: `smtp://127.0.0.1:${mail.port}`,
        ALLOWED_EMAIL_DOMAINS: ALLOWED_DOMAIN,
        MAGIC_LINK_BASE_URL: `${web.origin}/auth/magic`,
      },
      { logStream: logs },
    );
    gateway = platform.urls.gateway.replace('127.0.0.1', 'localhost');
    browser = await launchBrowser();
    frontend = await browser.context.newPage();
    await frontend.goto(`${web.origin}/`);
    foreignPage = await browser.context.newPage();
    // 127.0.0.1 is another site than localhost: this page is cross-site to the gateway.
    await foreignPage.goto(`${foreign.origin.replace('localhost', '127.0.0.1')}/`);
  });

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
    await web?.close();
    await foreign?.close();
    await mail.stop();
  });

  const post = (page: Page, query: string, variables: Record<string, unknown> = {}) =>
    pageFetch(page, gateway, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
      credentials: 'include',
    });

  it('signs in with verifyMagicLink and reads its session and surveys by GET with the cookie alone', async () => {
    const email = `page@${ALLOWED_DOMAIN}`;
    const asked = await post(
      frontend,
      'mutation Ask($input: MagicLinkRequestInput!) { requestMagicLink(input: $input) { accepted } }',
      { input: { email } },
    );
    expect(asked.body?.errors).toBeUndefined();
    const token = linkIn(await mail.waitFor(email), `${web.origin}/auth/magic?`)!.searchParams.get('token');
    const verified = await post(
      frontend,
      'mutation Verify($input: MagicLinkVerifyInput!) { verifyMagicLink(input: $input) { user { email } } }',
      { input: { token } },
    );
    expect(verified.body).toEqual({ data: { verifyMagicLink: { user: { email } } } });

    // urql's default for a query: GET, the document in the URL, no preflight header.
    const url = new URL(gateway);
    url.searchParams.set('query', '{ surveySession { user { email } } surveys(first: 5) { nodes { id } } }');
    const read = await pageFetch(frontend, url.toString(), {
      headers: { accept: URQL_ACCEPT },
      credentials: 'include',
    });
    expect(read).toEqual({
      status: 200,
      body: { data: { surveySession: { user: { email } }, surveys: { nodes: [] } } },
    });

    expect((await post(frontend, 'mutation { endSurveySession }')).body).toEqual({ data: { endSurveySession: true } });
    const after = await pageFetch(frontend, url.toString(), {
      headers: { accept: URQL_ACCEPT },
      credentials: 'include',
    });
    expect(after.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('refuses what a foreign page makes the browser send without CORS: a simple POST, an image', async () => {
    const refusedBefore = logs.lines.filter((line) => line.res?.statusCode === 403).length;
    const url = new URL(gateway);
    url.searchParams.set('query', '{ contacts(first: 1) { totalCount } }');
    await foreignPage.evaluate(async (target) => {
      await fetch(target, {
        method: 'POST',
        mode: 'no-cors',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ query: '{ contacts(first: 1) { totalCount } }' }),
        credentials: 'include',
      });
    }, gateway);
    // An <img>, as a page would embed it (no DOM types here: the page runs this text).
    await foreignPage.evaluate(
      `new Promise((done) => { const image = new Image(); image.onerror = image.onload = done; image.src = ${JSON.stringify(url.toString())}; })`,
    );
    // Each reached the gateway and was refused (403) before any GraphQL ran.
    const refused = () => logs.lines.filter((line) => line.res?.statusCode === 403).length;
    for (let attempt = 0; attempt < 50 && refused() < refusedBefore + 2; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(logs.lines.filter((line) => line.res?.statusCode === 403).length).toBe(refusedBefore + 2);
  });
});
