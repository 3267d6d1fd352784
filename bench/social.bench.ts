/**
 * `npm run bench:social`: what the shield costs on a large list, on PostgreSQL.
 *
 * One user with 100 posts; the same page of 100 posts is fetched four ways at 8 connections:
 * REST `GET /api/posts?limit=100` through the whole chain (adapter, gateway, subgraph), and the
 * same GraphQL operation straight to the social subgraph; each with the subgraph as served
 * (graphql-shield applied) and built from the same definition without the shield. The unguarded
 * subgraph exists only inside this benchmark; nothing in the product can start one.
 *
 * The platform runs in a child process so the load generator does not share its event loop.
 * Runs are interleaved and repeated; p50/p95 are over every response of every round.
 */
import 'reflect-metadata';
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { startGateway } from '#gateway/gateway.js';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { loadConfig } from '#lib/config.js';
import { Identity } from '#lib/identity.js';
import { createLogger } from '#lib/observability/logger.js';
import { PostPageDocument } from '#rest-adapters/social/operations.generated.js';
import { buildFederatedSchema } from '#lib/subgraph/federated-schema.js';
import { serveSubgraph } from '#lib/subgraph/subgraph.js';
import { startSocialRest } from '#rest-adapters/social/index.js';
import { startSocialSubgraph } from '#subgraphs/social/index.js';
import { createSocialContext } from '#subgraphs/social/social.context.js';
import { BENCH_PRODUCTION_DECISIONS } from './support.js';
import { socialSubgraph } from '#subgraphs/social/social.subgraph.js';

const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const POSTS = 100;
const CONNECTIONS = 8;
// Many short, interleaved slices rather than a few long runs: on a shared machine the load drifts,
// and every target should see the same drift.
const RUN_SECONDS = Number(process.env.BENCH_RUN_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const here = fileURLToPath(import.meta.url);

interface Served {
  urls: { rest: string; restUnguarded: string; subgraph: string; unguarded: string };
  authorization: string;
}

/** The social service as deployed alone, plus an unguarded copy of its subgraph on the same database. */
async function servePlatform(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'social-bench-'));
  const config = loadConfig({
    NODE_ENV: 'production',
    ...BENCH_PRODUCTION_DECISIONS,
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: process.env.BENCH_PLATFORM_DATABASE_URL,
  });
  const logger = createLogger(config);
  const deps = { config, logger, identity: await Identity.create(config) };
  const subgraph = await startSocialSubgraph(deps, { port: 0 });
  const { schema } = await buildFederatedSchema(socialSubgraph());
  const unguarded = await serveSubgraph({
    name: 'social-unguarded',
    schema,
    config,
    logger,
    port: 0,
    context: (req) => createSocialContext(subgraph.runtime, subgraph.orm.em.fork(), req),
    isReady: async () => true,
  });
  const gateway = await startGateway(deps, { port: 0, subgraphUrls: { social: subgraph.url } });
  const adapter = await startSocialRest(deps, { port: 0, client: gateway.client });
  // The same chain again, its gateway routed to the unguarded subgraph.
  const gatewayUnguarded = await startGateway(deps, { port: 0, subgraphUrls: { social: unguarded.url } });
  const adapterUnguarded = await startSocialRest(deps, { port: 0, client: gatewayUnguarded.client });
  const served: Served = {
    urls: { rest: adapter.url, restUnguarded: adapterUnguarded.url, subgraph: subgraph.url, unguarded: unguarded.url },
    authorization: `Bearer ${await deps.identity.sign({ sub: 'bench-user' })}`,
  };
  process.send?.(served);
  process.on('SIGTERM', () => {
    void (async () => {
      for (const part of [adapterUnguarded, adapter, gatewayUnguarded, gateway, unguarded, subgraph])
        await part.close();
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    })();
  });
}

function startPlatform(databaseUrl: string): Promise<{ served: Served; stop(): Promise<void> }> {
  const child = fork(here, ['--serve-platform'], {
    env: { ...process.env, BENCH_PLATFORM_DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the platform exited with ${code} before it was ready`)));
    child.once('message', (served: Served) => {
      child.removeAllListeners('exit');
      resolve({
        served,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function run(options: autocannon.Options, latencies: number[]): Promise<void> {
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (error, finished) => (error ? reject(error as Error) : resolve(finished)));
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  });
  if (result.non2xx || result.errors)
    throw new Error(`${options.url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
}

async function main(): Promise<void> {
  if (process.argv.includes('--serve-platform')) return servePlatform();

  const database = `bench_social_${process.pid}`;
  const admin = new pg.Client({ connectionString: SERVER });
  await admin.connect();
  await admin.query(`create database "${database}"`);
  const url = new URL(SERVER);
  url.pathname = `/${database}`;
  const platform = await startPlatform(url.toString());
  try {
    const { urls, authorization } = platform.served;
    for (let i = 0; i < POSTS; i++) {
      const response = await fetch(`${urls.rest}/api/posts`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({
          content: `Benchmark post ${i}: ${'lorem ipsum '.repeat(10)}`,
          platforms: ['mastodon', 'x'],
          scheduledAt: new Date(Date.UTC(2040, 0, 1 + i)).toISOString(),
        }),
      });
      if (response.status !== 201) throw new Error(`seeding answered ${response.status}: ${await response.text()}`);
    }
    const graphqlBody = JSON.stringify({ query: String(PostPageDocument), variables: { limit: POSTS } });
    const targets: Array<{ name: string; options: autocannon.Options }> = [
      {
        name: `REST GET /api/posts?limit=${POSTS}, whole chain, shield on`,
        options: { url: `${urls.rest}/api/posts?limit=${POSTS}`, headers: { authorization } },
      },
      {
        name: `REST GET /api/posts?limit=${POSTS}, whole chain, shield off`,
        options: { url: `${urls.restUnguarded}/api/posts?limit=${POSTS}`, headers: { authorization } },
      },
      {
        name: 'GraphQL PostPage, social subgraph, shield on',
        options: {
          url: urls.subgraph,
          method: 'POST',
          headers: { authorization, 'content-type': 'application/json' },
          body: graphqlBody,
        },
      },
      {
        name: 'GraphQL PostPage, social subgraph, shield off',
        options: {
          url: urls.unguarded,
          method: 'POST',
          headers: { authorization, 'content-type': 'application/json' },
          body: graphqlBody,
        },
      },
    ];
    // Each answer must be the full page before anything is timed.
    for (const target of targets) {
      const response = await fetch(target.options.url, {
        method: target.options.method ?? 'GET',
        headers: target.options.headers as Record<string, string>,
        body: target.options.body as string | undefined,
      });
      const body = (await response.json()) as { data?: unknown; total?: number };
      const items =
        'total' in body
          ? (body as { data: unknown[] }).data
          : (body.data as { postPage: { items: unknown[] } }).postPage.items;
      if (items.length !== POSTS) throw new Error(`${target.name} answered ${items.length} posts`);
    }
    const latencies = new Map(targets.map((target) => [target.name, [] as number[]]));
    for (const target of targets) await run({ ...target.options, connections: CONNECTIONS, duration: 1 }, []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of targets)
        await run({ ...target.options, connections: CONNECTIONS, duration: RUN_SECONDS }, latencies.get(target.name)!);
    }
    console.log(
      `\n${POSTS} posts per answer, ${CONNECTIONS} connections, ${ROUNDS} x ${RUN_SECONDS}s per target, PostgreSQL, NODE_ENV=production\n`,
    );
    const summary = new Map<string, { p50: number; p95: number }>();
    for (const [name, values] of latencies) {
      const sorted = values.sort((a, b) => a - b);
      const figures = { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
      summary.set(name, figures);
      console.log(
        `${name.padEnd(70)} p50 ${figures.p50.toFixed(1).padStart(6)} ms   p95 ${figures.p95.toFixed(1).padStart(6)} ms   (${sorted.length} requests)`,
      );
    }
    const figures = targets.map((target) => summary.get(target.name)!);
    const change = (a: number, b: number) => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)} %`;
    console.log(
      `\nshield on vs off, whole REST chain:  p50 ${change(figures[0].p50, figures[1].p50)}, p95 ${change(figures[0].p95, figures[1].p95)}`,
    );
    console.log(
      `shield on vs off, subgraph alone:    p50 ${change(figures[2].p50, figures[3].p50)}, p95 ${change(figures[2].p95, figures[3].p95)}`,
    );
  } finally {
    await platform.stop();
    await admin.query(`drop database if exists "${database}" with (force)`);
    await admin.end();
  }
}

exitWithHelpIfAsked(`
usage: npm run bench:social

What graphql-shield costs on a large list, on PostgreSQL (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/postgres; a database of its own is made and dropped): one page of
100 posts through REST and straight from the subgraph, with and without the shield.
`);

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
