import 'reflect-metadata';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { describeInBrowser, launchBrowser, runInGraphiQL, type Browser } from '#test/support/browser.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

describeInBrowser('GraphiQL at /graphiql, with no internet', () => {
  let platform: TestPlatform;
  let browser: Browser;
  let page: Page;
  /** Every request the page made to anywhere but the gateway (refused, as on a machine without internet). */
  const elsewhere: string[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform();
    browser = await launchBrowser();
    const gatewayOrigin = new URL(platform.urls.gateway).origin;
    await browser.context.route('**/*', (route) => {
      const url = route.request().url();
      if (new URL(url).origin === gatewayOrigin || url.startsWith('data:')) return route.continue();
      elsewhere.push(url);
      return route.abort('internetdisconnected');
    });
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it('loads every script and style from the gateway and runs a query with a bearer token', async () => {
    const token = await platform.token('explorer-user');
    const created = await rest(
      'POST',
      `${platform.urls.socialRest}/api/posts`,
      { content: 'Seen in GraphiQL' },
      { authorization: `Bearer ${token}` },
    );
    expect(created.status).toBe(201);

    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(platform.urls.gateway.replace('/graphql', '/graphiql'));
    await page.waitForSelector('.graphiql-container .graphiql-query-editor .CodeMirror', { timeout: 20_000 });

    const contacts = (await runInGraphiQL(page, '"totalCount"')) as { data: { contacts: { totalCount: number } } };
    expect(contacts.data.contacts.totalCount).toEqual(expect.any(Number));

    const posts = (await runInGraphiQL(page, 'Seen in GraphiQL', {
      query: '{ posts(first: 5) { nodes { id content } } }',
      headers: { Authorization: `Bearer ${token}` },
    })) as { data: { posts: { nodes: Array<{ id: string; content: string }> } } };
    expect(posts.data.posts.nodes).toContainEqual({ id: created.body.id, content: 'Seen in GraphiQL' });

    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('shows the descriptions of the schema in its documentation pane', async () => {
    await page.click('[aria-label="Show Documentation Explorer"]');
    await page.getByText('Query', { exact: true }).first().click();
    await page.waitForSelector('.graphiql-doc-explorer-field-name');
    const text = await page.textContent('.graphiql-doc-explorer');
    // The root type's description and a field's, as written in the subgraphs' decorators.
    expect(text).toContain('What can be read');
    expect(text).toContain('Live contacts, newest first, optionally matching a full-text search');
    expect(elsewhere).toEqual([]);
  });
});
