import 'reflect-metadata';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { PROJECT_ROOT } from '#lib/paths.js';
import {
  bundleFrontend,
  callInPage,
  describeInBrowser,
  launchBrowser,
  serveFolder,
  type Browser,
  type WebOrigin,
} from '#test/support/browser.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { linkIn, MailCatcher } from '#test/surveys/support.js';
import type { Answer, Credentials, Frontend } from './frontend/graph-frontend.js';

/**
 * How a frontend uses the graph, in a real browser: a page served from `WEB_URL`, built from
 * Apollo Client and urql with their defaults, signs in through GraphQL alone and reads contacts,
 * their surveys and posts with one query; a part it may not see costs it that part only.
 */
describeInBrowser('a frontend with Apollo Client and urql: one graph, one sign-in (Chromium)', () => {
  const surveyor = 'surveyor@example.com';
  const mail = new MailCatcher();
  let built: { dir: string; remove(): void };
  let web: WebOrigin;
  let platform: TestPlatform;
  let browser: Browser;
  let page: Page;
  /** The identity service's token for the surveyor, as a frontend gets it after its own sign-in. */
  let identityToken: string;
  let contactId: string;
  /** HTTP methods of the page's calls to the gateway, in order (preflights are not page requests). */
  const gatewayMethods: string[] = [];

  /** Calls one of the page's functions (test/browser/frontend/graph-frontend.ts) inside the page. */
  const inPage = <Name extends Exclude<keyof Frontend, 'connect'>>(
    name: Name,
    ...args: Parameters<Frontend[Name]>
  ): Promise<Awaited<ReturnType<Frontend[Name]>>> => callInPage(page, name, args) as never;

  /** Runs the one query with a client and checks that the client sent it its default way. */
  async function readOneGraph(client: 'apollo' | 'urql', credentials: Credentials): Promise<Answer> {
    gatewayMethods.length = 0;
    const answer = await inPage('readOneGraph', client, credentials);
    expect(gatewayMethods).toEqual([client === 'apollo' ? 'POST' : 'GET']);
    return answer;
  }

  beforeAll(async () => {
    await mail.start();
    built = await bundleFrontend(path.join(PROJECT_ROOT, 'test/browser/frontend/graph-frontend.ts'));
    web = await serveFolder(built.dir);
    platform = await startTestPlatform({
      WEB_URL: web.origin,
      CORS_ORIGINS: web.origin,
      SMTP_URL: `smtp://127.0.0.1:${mail.port}`,
      MAGIC_LINK_BASE_URL: `${web.origin}/auth/magic`,
    });
    identityToken = await platform.token('frontend-user', undefined, surveyor);
    // What others wrote before the page opens: a contact (the contact book is open) and a post of the user.
    const contact = await rest('POST', `${platform.urls.contactsRest}/api/contacts`, {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
    });
    expect(contact.status).toBe(201);
    contactId = contact.body.id;
    const post = await rest(
      'POST',
      `${platform.urls.socialRest}/api/posts`,
      // REST's lenient words; the graph answers its enum's values.
      { content: 'Read by a frontend', platforms: [' Mastodon ', 'linkedin'] },
      { authorization: `Bearer ${identityToken}` },
    );
    expect(post.status).toBe(201);

    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on('request', (request) => {
      if (request.url().startsWith(platform.urls.gateway)) gatewayMethods.push(request.method());
    });
    await page.goto(`${web.origin}/`);
    await page.waitForFunction(() => 'frontend' in globalThis);
    await page.evaluate(
      (url) => (globalThis as unknown as { frontend: Frontend }).frontend.connect(url),
      platform.urls.gateway,
    );
    // Bundling, booting the platform and launching Chromium, on a machine that may be busy.
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
    await web?.close();
    built?.remove();
    await mail.stop();
  });

  const surveyCookie = async () =>
    (await browser.context.cookies(platform.urls.gateway)).find((cookie) => cookie.name === 'survey_session');

  it('signs in by magic link through GraphQL alone: verifyMagicLink sets the survey_session cookie', async () => {
    expect(await inPage('requestSignIn', surveyor)).toMatchObject({ requestMagicLink: { accepted: true } });
    const link = linkIn(await mail.waitFor(surveyor), `${web.origin}/auth/magic?`);
    const token = link?.searchParams.get('token');
    expect(token).toBeTruthy();

    expect(await inPage('signIn', token!)).toMatchObject({ verifyMagicLink: { user: { email: surveyor } } });
    // The page cannot read the cookie (HttpOnly); the browser keeps it and sends it where the page asks it to.
    expect(await surveyCookie()).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
  });

  it('with the survey cookie, writes a survey about a contact through GraphQL', async () => {
    const created = await inPage('createSurvey', { venueName: 'Town Hall', contactId }, { cookie: true });
    expect(created).toMatchObject({ createSurvey: { id: expect.any(String) } });
  });

  it.each(['apollo', 'urql'] as const)(
    'with the survey cookie, %s reads contacts and their surveys; posts, not the cookie’s, are null with UNAUTHENTICATED',
    async (client) => {
      const answer = await readOneGraph(client, { cookie: true });
      expect(answer.data).toMatchObject({
        contacts: { nodes: [{ id: contactId, firstName: 'Ada', surveys: [{ venueName: 'Town Hall' }] }] },
        surveys: { nodes: [{ venueName: 'Town Hall' }] },
        posts: null,
      });
      expect(answer.errors).toEqual([{ path: ['posts'], code: 'UNAUTHENTICATED', serviceName: 'social' }]);
    },
  );

  it.each(['apollo', 'urql'] as const)(
    'with one identity token, %s reads all three services in one query',
    async (client) => {
      const answer = await readOneGraph(client, { bearer: identityToken });
      expect(answer.errors).toEqual([]);
      expect(answer.data).toMatchObject({
        contacts: { nodes: [{ id: contactId, surveys: [{ venueName: 'Town Hall' }] }] },
        // The token's email claim names the same surveyor as the magic link: the same surveys.
        surveys: { nodes: [{ venueName: 'Town Hall' }] },
        posts: { nodes: [{ content: 'Read by a frontend', platforms: ['MASTODON', 'LINKEDIN'] }] },
      });
    },
  );

  it.each(['apollo', 'urql'] as const)(
    'signed out, %s gets a partial answer: every contact, and null with UNAUTHENTICATED where a credential is needed',
    async (client) => {
      const answer = await readOneGraph(client, {});
      expect(answer.data).toMatchObject({
        contacts: { nodes: [{ id: contactId, firstName: 'Ada', surveys: null }] },
        surveys: null,
        posts: null,
      });
      expect(answer.errors).toHaveLength(3);
      expect(answer.errors).toEqual(
        expect.arrayContaining([
          { path: ['contacts', 'nodes', 0, 'surveys'], code: 'UNAUTHENTICATED', serviceName: 'surveys' },
          { path: ['surveys'], code: 'UNAUTHENTICATED', serviceName: 'surveys' },
          { path: ['posts'], code: 'UNAUTHENTICATED', serviceName: 'social' },
        ]),
      );
    },
  );

  it('finds a duplicate, merges it and undoes the merge from the page (Apollo Client)', async () => {
    const duplicate = await rest('POST', `${platform.urls.contactsRest}/api/contacts`, {
      firstName: 'ada',
      lastName: 'LOVELACE',
      phone: '+44 20 7946 0001',
    });
    expect(duplicate.status).toBe(201);
    const found = await inPage('duplicatesOf', contactId, { bearer: identityToken });
    expect(found).toMatchObject({
      contact: { duplicates: [{ contact: { id: duplicate.body.id }, reasons: ['NAME'] }] },
    });
    const merged = (await inPage(
      'mergeContacts',
      { survivorId: contactId, mergeIds: [duplicate.body.id] },
      { bearer: identityToken },
    )) as { mergeContacts: { contact: { phone: string }; merge: { id: string } } };
    expect(merged.mergeContacts.contact.phone).toBe('+44 20 7946 0001');
    const undone = await inPage('undoContactMerge', merged.mergeContacts.merge.id, { bearer: identityToken });
    expect(undone).toMatchObject({
      undoContactMerge: { merge: { undoneAt: expect.any(String) }, restored: [{ id: duplicate.body.id }] },
    });
  });

  it('finds a company as it was written, punctuation and all, from the page (Apollo Client)', async () => {
    const created = await rest('POST', `${platform.urls.contactsRest}/api/contacts`, {
      firstName: 'Charles',
      lastName: 'Babbage',
      company: 'ENGINE-1822',
    });
    expect(created.status).toBe(201);
    for (const typed of ['engine-1822', 'Engine-18', 'engine']) {
      expect(await inPage('searchContacts', typed, {})).toMatchObject({
        contacts: { totalCount: 1, nodes: [{ id: created.body.id, company: 'ENGINE-1822' }] },
      });
    }
  });

  it('signs out through GraphQL: endSurveySession clears the cookie, and the surveys are closed again', async () => {
    expect(await inPage('signOut')).toEqual({ endSurveySession: true });
    expect(await surveyCookie()).toBeUndefined();
    const answer = await readOneGraph('urql', { cookie: true });
    expect(answer.data).toMatchObject({ surveys: null });
  });
});
