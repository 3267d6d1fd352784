import 'reflect-metadata';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { describeInBrowser, launchBrowser, type Browser } from '#test/support/browser.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

describeInBrowser('API reference at /docs of each REST service, with no internet', () => {
  let platform: TestPlatform;
  let browser: Browser;
  let page: Page;
  /** Every request the page made to anywhere but the REST services (refused, as on a machine without internet). */
  const elsewhere: string[] = [];
  /** Script errors and the console's complaints (a CSP violation is one). */
  const problems: string[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform();
    browser = await launchBrowser();
    const ours = new Set(
      [platform.urls.socialRest, platform.urls.surveysRest, platform.urls.contactsRest].map(
        (url) => new URL(url).origin,
      ),
    );
    await browser.context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('data:') || ours.has(new URL(url).origin)) return route.continue();
      elsewhere.push(url);
      return route.abort('internetdisconnected');
    });
    page = await browser.context.newPage();
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it('renders every operation of the contacts document and runs one from the page', async () => {
    await rest('POST', `${platform.urls.contactsRest}/api/contacts`, {
      firstName: 'Grace',
      email: 'grace@docs.example',
    });
    await page.goto(`${platform.urls.contactsRest}/docs`);
    await page.waitForSelector('.opblock', { timeout: 20_000 });
    const document = (await rest('GET', `${platform.urls.contactsRest}/openapi.json`)).body;
    const operations = Object.values(document.paths as Record<string, object>).flatMap((item) =>
      Object.keys(item),
    ).length;
    expect(await page.locator('.opblock').count()).toBe(operations);
    expect(await page.textContent('.info')).toContain('Contact management');

    const list = page.locator('.opblock-get', { has: page.locator('[data-path="/api/contacts"]') });
    await list.locator('.opblock-summary').first().click();
    await list.locator('.try-out__btn').click();
    await list.locator('.execute').click();
    await list.locator('.live-responses-table tbody .response-col_status').first().waitFor({ timeout: 20_000 });
    expect((await list.locator('.live-responses-table tbody .response-col_status').first().textContent())?.trim()).toBe(
      '200',
    );
    expect(await list.locator('.live-responses-table .highlight-code').first().textContent()).toContain(
      'grace@docs.example',
    );

    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('shows the credentials of social and surveys', async () => {
    await page.goto(`${platform.urls.socialRest}/docs`);
    await page.waitForSelector('.opblock', { timeout: 20_000 });
    expect(await page.locator('.btn.authorize').count()).toBe(1);
    await page.goto(`${platform.urls.surveysRest}/docs`);
    await page.waitForSelector('.opblock', { timeout: 20_000 });
    expect(await page.textContent('.info')).toContain('Venue surveys');
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
  });
});
