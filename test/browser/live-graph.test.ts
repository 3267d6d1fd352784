import 'reflect-metadata';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { loadConfig } from '#lib/config.js';
import { Identity } from '#lib/identity.js';
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
import { createTestDatabase, graphql, rest, type TestDatabase } from '#test/support/platform.js';
import { platformPorts } from '#test/support/ports.js';
import { startPlatformProcess } from '#test/support/process.js';
import { FakePlatform } from '#test/social-reach/fake-platforms.js';
import { browserOf, fakePlatformEnv } from '#test/social-reach/helpers.js';
import type { Frontend, StreamLog } from './frontend/live-frontend.js';

/** Rows of the imported file: enough that the import runs for a moment and reports progress on the way. */
const IMPORT_ROWS = process.env.TEST_DATABASE_URL ? 30_000 : 8_000;

/**
 * The live graph as a frontend uses it, in a real browser: a page served from `WEB_URL` follows
 * `contentEvents` with Apollo Client (its default multipart transport) and `contactImport(id)` and
 * `contactEvents` with urql over graphql-ws. The platform is the real `npm start` process, publishing
 * to a local Mastodon stand-in; it is stopped (SIGTERM) and started again on the same database under
 * the page, which then resumes each stream from the last cursor it kept and gets every event it
 * missed once, then the live ones.
 */
describeInBrowser('a live frontend: Apollo Client and urql follow the graph across a restart (Chromium)', () => {
  const mastodon = new FakePlatform('mastodon', 'masto-client', 'masto-secret');
  let built: { dir: string; remove(): void };
  let web: WebOrigin;
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  let platform: ChildProcessWithoutNullStreams | undefined;
  let gateway: string;
  let socialRest: string;
  let contactsRest: string;
  let user: Record<string, string>;
  let browser: Browser;
  let page: Page;

  /** Calls one of the page's functions (test/browser/frontend/live-frontend.ts) inside the page. */
  const inPage = <Name extends Exclude<keyof Frontend, 'connect'>>(
    name: Name,
    ...args: Parameters<Frontend[Name]>
  ): Promise<Awaited<ReturnType<Frontend[Name]>>> => callInPage(page, name, args) as never;

  /** Reads a stream's log in the page until `done` holds of it. */
  async function pageLogUntil<Event>(
    read: () => Promise<StreamLog<Event> | undefined>,
    done: (log: StreamLog<Event>) => boolean,
    timeoutMs = 30_000,
  ): Promise<StreamLog<Event>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const log = await read();
      if (log && done(log)) return log;
      if (Date.now() > deadline) throw new Error(`the page did not see it in time; it saw ${JSON.stringify(log)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  const contentLog = () => inPage('contentLog');
  const contactsLog = () => inPage('contactsLog');

  async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async function startPlatform(): Promise<void> {
    platform = (await startPlatformProcess(env)).child;
  }
  async function stopPlatform(): Promise<void> {
    const child = platform;
    platform = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }

  const createPost = async (content: string, scheduledAt?: Date) => {
    const created = await rest(
      'POST',
      `${socialRest}/api/posts`,
      { content, platforms: ['mastodon'], ...(scheduledAt ? { scheduledAt: scheduledAt.toISOString() } : {}) },
      user,
    );
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const postStatus = async (id: string) =>
    (await rest('GET', `${socialRest}/api/content-ops/items/${id}`, undefined, user)).body.status as string;
  const createContact = async (firstName: string) => {
    const created = await rest('POST', `${contactsRest}/api/contacts`, {
      firstName,
      email: `${firstName.toLowerCase()}@live.example`,
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000);

  beforeAll(async () => {
    await mastodon.start();
    built = await bundleFrontend(path.join(PROJECT_ROOT, 'test/browser/frontend/live-frontend.ts'));
    web = await serveFolder(built.dir);
    database = await createTestDatabase();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'live-graph-'));
    env = {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      // One process, no cluster: the restart below is of the one process that holds every stream.
      WEB_CONCURRENCY: '1',
      WEB_URL: web.origin,
      CORS_ORIGINS: web.origin,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
    };
    Object.assign(env, await platformPorts());
    Object.assign(env, fakePlatformEnv(Number(env.SOCIAL_REST_PORT), { mastodon }));
    gateway = `http://127.0.0.1:${env.GATEWAY_PORT}/graphql`;
    socialRest = `http://127.0.0.1:${env.SOCIAL_REST_PORT}`;
    contactsRest = `http://127.0.0.1:${env.CONTACTS_REST_PORT}`;
    // The development issuer's keys, made here first under DATA_DIR: the platform reads the same ones at each start.
    const identity = await Identity.create(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
    const token = await identity.sign({ sub: 'live-user', email: 'live@example.com' });
    user = { authorization: `Bearer ${token}` };
    await startPlatform();

    // The user connects Mastodon once (the browser's part of OAuth, played here), so the publisher can post.
    const start = await rest('GET', `${socialRest}/api/integrations/mastodon/connect`, undefined, user);
    expect(start.status).toBe(302);
    const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    const callback = await rest('GET', authorize.headers.get('location')!, undefined, browserOf(start));
    expect(callback.headers.get('location')).toContain('status=connected');

    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.goto(`${web.origin}/`);
    await page.waitForFunction(() => 'frontend' in globalThis);
    await page.evaluate(
      ({ url, token }) => (globalThis as unknown as { frontend: Frontend }).frontend.connect(url, token),
      // The gateway as the page's site names it (localhost), as a frontend's configuration would.
      { url: gateway.replace('127.0.0.1', 'localhost'), token },
    );
    // Bundling, booting the platform and launching Chromium, on a machine that may be busy.
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await stopPlatform();
    await web?.close();
    built?.remove();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await mastodon.stop();
  }, 60_000);

  it('Apollo Client, over multipart with no extra link, sees a scheduled post PUBLISHED by the publisher', async () => {
    await inPage('followContent');
    // A subscription starts at the present: give it a moment to be in place before the change it is to see.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const text = 'Live from the publisher';
    const id = await createPost(text, inSeconds(2));
    const log = await pageLogUntil(contentLog, (log) =>
      log.events.some((event) => event.contentId === id && event.type === 'PUBLISHED'),
    );
    const ofPost = log.events.filter((event) => event.contentId === id);
    expect(ofPost[0]).toMatchObject({ type: 'CREATED', post: { id, content: text } });
    expect(ofPost.at(-1)).toMatchObject({ type: 'PUBLISHED', post: { id, status: 'PUBLISHED' } });
    expect(mastodon.posts.filter((status) => status.text === text)).toHaveLength(1);
    expect(log.ends).toEqual([]);
    expect(log.errors).toEqual([]);
    expect(new Set(log.events.map((event) => event.cursor)).size).toBe(log.events.length);
  }, 60_000);

  it('urql, over graphql-ws through its subscriptionExchange, sees an import climb to SUCCEEDED', async () => {
    const lines = ['firstName,email,company'];
    for (let n = 1; n <= IMPORT_ROWS; n++) lines.push(`Row${n},row${n}@import.example,Imported Ltd`);
    const form = new FormData();
    form.append('file', new Blob([lines.join('\n')], { type: 'text/csv' }), 'contacts.csv');
    const started = await fetch(`${contactsRest}/api/contacts/import`, {
      method: 'POST',
      body: form,
      headers: { prefer: 'respond-async' },
    });
    expect(started.status).toBe(202);
    const id = started.headers.get('location')!.split('/').at(-1)!;
    await inPage('followImport', id);

    const log = await pageLogUntil(
      () => inPage('importLog', id),
      (log) => log.ends.length > 0,
      120_000,
    );
    expect(log.errors).toEqual([]);
    expect(log.ends).toEqual(['complete']);
    const last = log.events.at(-1)!;
    expect(last).toMatchObject({ id, status: 'SUCCEEDED', rows: IMPORT_ROWS, processed: IMPORT_ROWS });
    expect(last.created).toBe(IMPORT_ROWS);
    // Progress the page could draw a bar from: some steps on the way, never going back.
    const running = log.events.filter((event) => event.status === 'RUNNING');
    expect(running.some((event) => event.processed > 0 && event.processed < IMPORT_ROWS)).toBe(true);
    const processed = log.events.map((event) => event.processed);
    expect(processed).toEqual([...processed].sort((a, b) => a - b));
    expect(log.events.filter((event) => event.status === 'SUCCEEDED')).toHaveLength(1);
  }, 150_000);

  it('after the platform restarts under it, the page resumes both streams from its last cursors and gets every missed event once', async () => {
    // contentEvents followed with Apollo Client (still, since the first test, when it ran) and contactEvents with urql.
    if (!(await contentLog()).following) await inPage('followContent');
    await inPage('followContacts');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const ada = await createContact('Ada');
    await pageLogUntil(contactsLog, (log) => log.events.some((event) => event.contactId === ada));

    // A post due while the platform is down: its publishing happens when the platform is back.
    const due = await createPost('Due during the restart', inSeconds(3));
    const beforeStop = await pageLogUntil(contentLog, (log) => log.events.some((event) => event.contentId === due));
    const contactsBeforeStop = await contactsLog();
    await stopPlatform();
    // Shutdown ended both streams, each its transport's way, and the page noticed on its own: multipart with a
    // last part asking to come back with the cursor, then its end; the WebSocket with 1012 (service restart).
    const contentEnded = await pageLogUntil(contentLog, (log) => log.ends.length === 1);
    expect(contentEnded.ends).toEqual(['complete']);
    expect(contentEnded.errors).toEqual([expect.stringContaining('subscribe again with your last cursor')]);
    const contactsEnded = await pageLogUntil(contactsLog, (log) => log.ends.length === 1);
    expect(contactsEnded.ends).toEqual(['closed: 1012']);
    expect(contactsEnded.errors).toEqual([]);

    await startPlatform();
    // Changes made while the page is not subscribed: the post due meanwhile is published, a post and a contact are made, one changes.
    const whileAway = await createPost('Written while the page was away');
    const bob = await createContact('Bob');
    const renamed = await rest('PUT', `${contactsRest}/api/contacts/${ada}`, {
      firstName: 'Augusta',
      email: 'ada@live.example',
    });
    expect(renamed.status).toBe(200);
    await until(async () => ((await postStatus(due)) === 'published' ? true : undefined), 60_000);

    await inPage('followContent');
    await inPage('followContacts');
    const content = await pageLogUntil(contentLog, (log) => log.events.some((event) => event.contentId === whileAway));
    const contacts = await pageLogUntil(contactsLog, (log) =>
      log.events.some((event) => event.contactId === ada && event.type === 'UPDATED'),
    );
    // And live again after the replay: one more change of each, after what was missed.
    const live = await createPost('Live after the resume');
    const carol = await createContact('Carol');
    const contentAfter = await pageLogUntil(contentLog, (log) => log.events.some((event) => event.contentId === live));
    const contactsAfter = await pageLogUntil(contactsLog, (log) =>
      log.events.some((event) => event.contactId === carol),
    );

    // Every event of these posts the platform recorded, once, in its order: the page's against the audit log's
    // query (which lists newest first).
    const missedContent = contentAfter.events.slice(beforeStop.events.length);
    for (const id of [due, whileAway, live]) {
      const recorded = await graphql<{ contentEvents: { nodes: Array<{ cursor: string; type: string }> } }>(
        gateway,
        'query ($id: ID!) { contentEvents(contentId: $id, first: 100) { nodes { cursor type } } }',
        { id },
        user,
      );
      const oldestFirst = recorded.body.data!.contentEvents.nodes.reverse();
      expect(
        contentAfter.events.filter((event) => event.contentId === id).map(({ cursor, type }) => ({ cursor, type })),
      ).toEqual(oldestFirst);
    }
    expect(missedContent.filter((event) => event.contentId === due).at(-1)).toMatchObject({
      type: 'PUBLISHED',
      post: { status: 'PUBLISHED' },
    });
    // The live one after every missed one.
    expect(missedContent.at(-1)).toMatchObject({ type: 'CREATED', contentId: live });
    expect(content.events.length).toBeGreaterThan(beforeStop.events.length);
    const missedContacts = contactsAfter.events.slice(contactsBeforeStop.events.length);
    expect(contacts.events.length).toBeGreaterThan(contactsBeforeStop.events.length);
    expect(missedContacts.map(({ type, contactId }) => ({ type, contactId }))).toEqual([
      { type: 'CREATED', contactId: bob },
      { type: 'UPDATED', contactId: ada },
      { type: 'CREATED', contactId: carol },
    ]);
    expect(missedContacts[1].contact).toEqual({ id: ada, firstName: 'Augusta' });
    for (const log of [contentAfter, contactsAfter])
      expect(new Set(log.events.map((event) => event.cursor)).size).toBe(log.events.length);
    // Resuming raised no error, and no stream ended again.
    expect(contentAfter.errors).toHaveLength(1);
    expect(contactsAfter.errors).toEqual([]);
    expect([contentAfter.ends.length, contactsAfter.ends.length]).toEqual([1, 1]);
  }, 240_000);
});
