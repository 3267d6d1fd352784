import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from '@jest/globals';
import { chromium, type BrowserContext } from 'playwright-core';

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
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html><head><title>frontend</title></head><body></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
