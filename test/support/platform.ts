import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig, type Config } from '#lib/config.js';
import { createLogger } from '#lib/observability/logger.js';
import { startPlatform, type Platform, type PlatformOptions } from '#scripts/platform.js';

export interface TestDatabase {
  /** DATABASE_URL of a fresh database, or undefined for embedded PGlite. */
  url: string | undefined;
  drop(): Promise<void>;
}

/**
 * A database of the suite's own: a new PostgreSQL database on `TEST_DATABASE_URL`'s server, or,
 * when that is unset (or `embedded` is asked for), embedded PGlite under the suite's DATA_DIR.
 */
export async function createTestDatabase(options: { embedded?: boolean } = {}): Promise<TestDatabase> {
  const server = process.env.TEST_DATABASE_URL;
  if (!server || options.embedded) return { url: undefined, drop: async () => {} };
  const name = `test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: server });
      await client.connect();
      await client.query(`drop database if exists "${name}" with (force)`);
      await client.end();
    },
  };
}

export interface TestPlatform extends Platform {
  config: Config;
  urls: { gateway: string; socialRest: string; surveysRest: string; contactsRest: string };
  /** A bearer token from the development issuer. */
  token(sub: string, scopes?: string[], email?: string): Promise<string>;
  stop(): Promise<void>;
}

/** Boots the real platform on free ports with its own database and data folder. */
export async function startTestPlatform(
  env: Record<string, string> = {},
  options: PlatformOptions & { embedded?: boolean; logStream?: NodeJS.WritableStream } = {},
): Promise<TestPlatform> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-test-'));
  const database = await createTestDatabase({ embedded: options.embedded });
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    GATEWAY_PORT: '0',
    SOCIAL_REST_PORT: '0',
    SURVEYS_REST_PORT: '0',
    CONTACTS_REST_PORT: '0',
    SOCIAL_SUBGRAPH_PORT: '0',
    SURVEYS_SUBGRAPH_PORT: '0',
    CONTACTS_SUBGRAPH_PORT: '0',
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...env,
  });
  const platform = await startPlatform(config, createLogger(config, options.logStream), options);
  return {
    ...platform,
    config,
    urls: {
      gateway: platform.gateway.url,
      socialRest: platform.rest.social.url,
      surveysRest: platform.rest.surveys.url,
      contactsRest: platform.rest.contacts.url,
    },
    token: (sub, scopes, email) => platform.identity.sign({ sub, scopes, email }),
    stop: async () => {
      await platform.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** POSTs a GraphQL operation to a URL and returns the parsed body and the status. */
export async function graphql<Data = Record<string, unknown>>(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  body: { data?: Data; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> };
}> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as never };
}

/** A JSON request to a REST adapter; answers status, headers and the parsed body (if any). */
export async function rest(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    redirect: 'manual',
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}
