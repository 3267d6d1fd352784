import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from '@jest/globals';
import { build } from 'esbuild';
import express from 'express';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`; `.ci/run` installs it when missing). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Flags for a closed network: without the background-networking ones Chromium's own connections
 * to the outside are refused and it stalls; each run gets a fresh profile (user data dir).
 */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * `describe` when Chromium is installed; otherwise one skipped test whose title says why, so the
 * run shows it plainly (the machine could not install the browser) instead of passing in silence.
 */
export function describeInBrowser(name: string, body: () => void): void {
  if (existsSync(CHROMIUM_PATH)) {
    describe(name, body);
    return;
  }
  describe(name, () => {
    it.skip(`SKIPPED: no Chromium at ${CHROMIUM_PATH} (install it with apt-get install -y chromium; .ci/run does)`, () => {});
  });
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile of its own. */
export async function launchBrowser(): Promise<Browser> {
  const userDataDir = mkdtempSync(path.join(os.tmpdir(), 'chromium-profile-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

export interface WebOrigin {
  /** `http://localhost:<port>`: what the browser sends as `Origin` from this page. */
  origin: string;
  close(): Promise<void>;
}

/** An empty HTML page on its own localhost port: a frontend's origin for the browser tests. */
export async function serveBlankPage(): Promise<WebOrigin> {
  const server = http.createServer((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<!doctype html><html><head><title>frontend</title></head><body></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Builds a frontend as a web app's build step would: the TypeScript entry and the npm packages it
 * imports bundled by esbuild into one browser script, `frontend.js`, beside an `index.html` that loads
 * it, in a temporary folder (nothing comes from a CDN).
 */
export async function bundleFrontend(entry: string): Promise<{ dir: string; remove(): void }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'frontend-'));
  await build({
    entryPoints: [entry],
    outfile: path.join(dir, 'frontend.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    logLevel: 'silent',
  });
  writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><html><head><title>frontend</title><script type="module" src="/frontend.js"></script></head><body></body></html>',
  );
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Serves a folder of static files (a built frontend) on its own localhost port: a frontend's origin. */
export async function serveFolder(dir: string): Promise<WebOrigin> {
  const server = http.createServer(express().use(express.static(dir)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The little of the page's DOM these tests touch (the project compiles without the DOM library). */
interface CodeMirrorHost {
  CodeMirror?: { getValue(): string; setValue(text: string): void };
}
type PageGlobals = { document: { querySelectorAll(selector: string): ArrayLike<CodeMirrorHost> } };

/** Sets the text of the GraphiQL editor at `selector` through its CodeMirror instance (typing would fight its auto-closed brackets). */
async function setEditor(page: Page, selector: string, text: string): Promise<void> {
  await page.evaluate(
    ({ selector, text }) => {
      const { document } = globalThis as unknown as PageGlobals;
      const editor = document.querySelectorAll(selector)[0];
      if (!editor?.CodeMirror) throw new Error(`no editor at ${selector}`);
      editor.CodeMirror.setValue(text);
    },
    { selector, text },
  );
}

/** Runs the query in the editor and waits for GraphiQL to show an answer that contains `expected`. */
async function runAndRead(page: Page, expected: string): Promise<unknown> {
  await page.click('.graphiql-execute-button');
  const handle = await page
    .waitForFunction(
      (expected) => {
        const { document } = globalThis as unknown as PageGlobals;
        const text = document.querySelectorAll('.result-window .CodeMirror')[0]?.CodeMirror?.getValue() ?? '';
        return text.includes(expected) ? text : false;
      },
      expected,
      { timeout: 15_000 },
    )
    .catch(async (error: Error) => {
      const shown = await page.evaluate(() =>
        (globalThis as unknown as PageGlobals).document
          .querySelectorAll('.result-window .CodeMirror')[0]
          ?.CodeMirror?.getValue(),
      );
      throw new Error(`${error.message}; GraphiQL shows: ${shown}`);
    });
  return JSON.parse((await handle.jsonValue()) as string);
}

/**
 * Runs a query in GraphiQL as a person would: the query (when given) and the headers (when given, in
 * the Headers tab) typed into its editors, then the Run button; answers what GraphiQL shows once that
 * contains `expected`.
 */
export async function runInGraphiQL(
  page: Page,
  expected: string,
  input: { query?: string; headers?: Record<string, string> } = {},
): Promise<unknown> {
  if (input.query) await setEditor(page, '.graphiql-query-editor .CodeMirror', input.query);
  if (input.headers) {
    await page.getByText('Headers', { exact: true }).click();
    await setEditor(
      page,
      '.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror',
      JSON.stringify(input.headers),
    );
  }
  return runAndRead(page, expected);
}

/**
 * Calls `name`, one of the functions a bundled frontend put on the page's `globalThis.frontend`, inside
 * the page with `args`, and answers what it answered (as the page serialised it). Each test types it
 * by its own frontend's functions.
 */
export function callInPage(page: Page, name: string, args: unknown[]): Promise<unknown> {
  return page.evaluate(
    ({ name, args }) => {
      const { frontend } = globalThis as unknown as { frontend: Record<string, (...args: unknown[]) => unknown> };
      return frontend[name](...args);
    },
    { name, args },
  );
}
