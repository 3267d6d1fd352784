import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  createTestDatabase,
  graphql,
  rest,
  startTestPlatform,
  type TestDatabase,
  type TestPlatform,
} from '#test/support/platform.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '#lib/config.js';
import { createLogger } from '#lib/observability/logger.js';
import { startPlatform } from '#scripts/platform.js';
import { freePorts, PORT_VARIABLES } from '#test/support/ports.js';
import { startTcpProxy, type TcpProxy } from '#test/support/tcp-proxy.js';

const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `url` until it answers `status`; answers how long that took (ms), or fails after `withinMs`. */
async function untilStatus(url: string, status: number, withinMs: number): Promise<number> {
  const started = Date.now();
  let last = 0;
  while (Date.now() - started < withinMs) {
    last = await fetch(url).then(
      (response) => response.status,
      () => 0,
    );
    if (last === status) return Date.now() - started;
    await sleep(100);
  }
  throw new Error(`${url} still answered ${last} after ${withinMs} ms (waited for ${status})`);
}

const probe = (subgraphUrl: string, name: 'readyz' | 'healthz') => subgraphUrl.replace(/\/graphql$/, `/${name}`);

/**
 * Clients that write contacts as fast as answers come, recording every answer. Every other client sends
 * an Idempotency-Key, whose claim and record are statements of their own that the outage cuts too.
 */
function startWriters(base: string, clients: number) {
  const statuses = new Map<number | string, number>();
  const acknowledged: string[] = [];
  let running = true;
  let sequence = 0;
  const loops = Array.from({ length: clients }, async (_unused, client) => {
    while (running) {
      const n = sequence++;
      try {
        const email = `w${client}-${n}@outage.example`;
        const answer = await rest(
          'POST',
          `${base}/api/contacts`,
          { firstName: `Writer ${client}`, email },
          client % 2 ? { 'idempotency-key': `outage-${email}` } : {},
        );
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 201) acknowledged.push(answer.body.id as string);
        if (answer.status === 503) {
          expect(answer.headers.get('retry-after')).toBe('5');
          expect(answer.body).toMatchObject({
            status: 503,
            code: 'SERVICE_UNAVAILABLE',
            detail: expect.stringMatching(/temporarily unavailable/),
          });
        }
      } catch (error) {
        const key = `network error: ${(error as Error).message}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
    }
  });
  return {
    statuses,
    acknowledged,
    count: (status: number) => statuses.get(status) ?? 0,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

onPostgres('PostgreSQL outage behind a TCP proxy of the test', () => {
  const server = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres');
  let database: TestDatabase;
  let proxy: TcpProxy;
  let platform: TestPlatform;

  beforeAll(async () => {
    database = await createTestDatabase();
    proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    platform = await startTestPlatform({ DATABASE_URL: proxy.through(database.url!), PUBLISH_WORKER: 'off' });
  }, 120_000);
  afterAll(async () => {
    await proxy?.restore();
    // Also pins that a platform stops, after an outage, within the drain time.
    const stopping = Date.now();
    await platform?.stop();
    expect(Date.now() - stopping).toBeLessThan(10_000);
    await proxy?.close();
    await database?.drop();
  });

  it('answers 503 with Retry-After (never 500) while the database is cut under load, probes follow it, and no acknowledged write is lost', async () => {
    const { contacts: contactsSubgraph, social: socialSubgraph, surveys: surveysSubgraph } = platform.subgraphs;
    const writers = startWriters(platform.urls.contactsRest, 8);
    try {
      for (const started = Date.now(); writers.count(201) < 20 && Date.now() - started < 20_000;) await sleep(100);
      expect(writers.count(201)).toBeGreaterThanOrEqual(20);

      await proxy.cut();
      const cutAt = Date.now();
      for (const subgraph of [contactsSubgraph, socialSubgraph, surveysSubgraph])
        await untilStatus(probe(subgraph.url, 'readyz'), 503, 5000);
      for (const base of [platform.urls.socialRest, platform.urls.surveysRest, platform.urls.contactsRest]) {
        await untilStatus(`${base}/readyz`, 503, 5000);
        await untilStatus(`${base}/health`, 503, 5000);
        expect((await fetch(`${base}/healthz`)).status).toBe(200);
      }
      expect((await fetch(probe(contactsSubgraph.url, 'healthz'))).status).toBe(200);
      // What a client sees meanwhile, on both faces.
      const list = await rest('GET', `${platform.urls.contactsRest}/api/contacts`);
      expect(list.status).toBe(503);
      expect(list.headers.get('retry-after')).toBe('5');
      expect(list.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const viaGateway = await graphql(platform.urls.gateway, '{ contacts(first: 1) { totalCount } }');
      expect(viaGateway.body.errors?.[0]?.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryAfter: 5 });
      const token = await platform.token('outage-user');
      const posts = await rest('GET', `${platform.urls.socialRest}/api/posts`, undefined, {
        authorization: `Bearer ${token}`,
      });
      expect(posts.status).toBe(503);
      const surveysAnswer = await rest('POST', `${platform.urls.surveysRest}/api/auth/magic/request`, {
        email: 'someone@outage.example',
      });
      expect([202, 200, 503]).toContain(surveysAnswer.status);
      while (Date.now() - cutAt < 3000) await sleep(100);
      expect(writers.count(503)).toBeGreaterThan(0);

      const acknowledgedBeforeRestore = writers.count(201);
      await proxy.restore();
      for (const subgraph of [contactsSubgraph, socialSubgraph, surveysSubgraph])
        await untilStatus(probe(subgraph.url, 'readyz'), 200, 10_000);
      for (const base of [platform.urls.socialRest, platform.urls.surveysRest, platform.urls.contactsRest]) {
        await untilStatus(`${base}/readyz`, 200, 10_000);
        await untilStatus(`${base}/health`, 200, 10_000);
      }
      await sleep(1000);
      expect(writers.count(201)).toBeGreaterThan(acknowledgedBeforeRestore);
    } finally {
      await writers.stop();
    }

    // Only answers a client can act on: written, or "try again"; no 500, no dropped connection.
    expect([...writers.statuses.keys()].sort()).toEqual([201, 503]);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>(
        'select count(*) as n from contacts.contact where id = any($1::uuid[])',
        [writers.acknowledged],
      );
      expect(Number(rows[0].n)).toBe(writers.acknowledged.length);
    } finally {
      await client.end();
    }
  }, 120_000);
});

onPostgres('PostgreSQL not answering at start', () => {
  const server = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres');
  const target = { host: server.hostname, port: Number(server.port || 5432) };

  it('keeps trying with backoff, every port alive (healthz 200) and not ready (readyz 503), then serves once the database answers', async () => {
    const database = await createTestDatabase();
    const proxy = await startTcpProxy(target, { open: false });
    const ports = Object.fromEntries(PORT_VARIABLES.map((name, index) => [name, index]));
    const numbers = await freePorts(PORT_VARIABLES.length);
    const bases = PORT_VARIABLES.map((_name, index) => `http://127.0.0.1:${numbers[index]}`);
    let platform: TestPlatform | undefined;
    try {
      const starting = startTestPlatform({
        DATABASE_URL: proxy.through(database.url!),
        ...Object.fromEntries(Object.entries(ports).map(([name, index]) => [name, String(numbers[index])])),
        PUBLISH_WORKER: 'off',
      });
      starting.catch(() => undefined);
      // The gateway, the three REST services and the three subgraphs: each alive, none ready.
      for (const base of bases) {
        await untilStatus(`${base}/healthz`, 200, 20_000);
        expect((await fetch(`${base}/readyz`)).status).toBe(503);
      }
      const subgraph = bases[ports.CONTACTS_SUBGRAPH_PORT];
      const early = await graphql(`${subgraph}/graphql`, '{ contacts(first: 1) { totalCount } }');
      expect(early.status).toBe(503);
      expect(early.body.errors?.[0]?.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      const earlyGateway = await graphql(
        `${bases[ports.GATEWAY_PORT]}/graphql`,
        '{ contacts(first: 1) { totalCount } }',
      );
      expect(earlyGateway.status).toBe(503);
      expect(earlyGateway.body.errors?.[0]?.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryAfter: 5 });
      const earlyRest = await rest('GET', `${bases[ports.CONTACTS_REST_PORT]}/api/contacts`);
      expect(earlyRest.status).toBe(503);
      expect(earlyRest.headers.get('retry-after')).toBe('5');
      expect(earlyRest.body).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      await sleep(2000);
      for (const base of bases) expect((await fetch(`${base}/readyz`)).status).toBe(503);

      await proxy.restore();
      platform = await starting;
      for (const base of bases) await untilStatus(`${base}/readyz`, 200, 10_000);
      const created = await rest('POST', `${platform.urls.contactsRest}/api/contacts`, {
        firstName: 'Late',
        email: 'late@outage.example',
      });
      expect(created.status).toBe(201);
    } finally {
      await platform?.stop();
      await proxy.close();
      await database.drop();
    }
  }, 120_000);

  it('gives up after DATABASE_CONNECT_TIMEOUT, naming it', async () => {
    const proxy = await startTcpProxy(target, { open: false });
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'connect-timeout-'));
    const ports = Object.fromEntries(PORT_VARIABLES.map((name) => [name, '0']));
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ...ports,
      DATABASE_URL: proxy.through(server.toString()),
      DATABASE_CONNECT_TIMEOUT: '2',
      PUBLISH_WORKER: 'off',
    });
    const started = Date.now();
    try {
      await expect(startPlatform(config, createLogger(config))).rejects.toThrow(/DATABASE_CONNECT_TIMEOUT \(2 s\)/);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await proxy.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
