/**
 * `npm run bench:contacts`: speed and memory of the contact management service on PostgreSQL.
 *
 * - The same search four ways, at 16 connections: a hand-written Express + pg handler running the
 *   same SQL (the floor), GraphQL straight to the contacts subgraph, GraphQL through the gateway,
 *   and REST through the adapter. Runs are interleaved and repeated; medians are quoted.
 * - Latency through the REST adapter at a steady 100 requests per second.
 * - Export of 100,000 and 10,000 contacts, import of a 100,000-row CSV: time and peak RSS of the
 *   platform process.
 *
 * The floor is bench/floor.ts (parameterized, as bench:chain's). The platform and the floor each run in a child process of their own (as under `npm start`), so
 * the load generator in this process does not share their event loop; RSS is sampled from /proc.
 */
import 'reflect-metadata';
import { fork, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, openAsBlob, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { parse } from 'csv-parse';
import pg from 'pg';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { loadConfig } from '#lib/config.js';
import { createLogger } from '#lib/observability/logger.js';
import { ContactPageDocument } from '#rest-adapters/contacts/operations.generated.js';
import { startGateway } from '#gateway/gateway.js';
import { Identity } from '#lib/identity.js';
import { startContactsRest } from '#rest-adapters/contacts/index.js';
import { startContactsSubgraph } from '#subgraphs/contacts/index.js';
import { serveFloor } from './floor.js';
import {
  cpuSeconds,
  fmt,
  median,
  percentile,
  randomWord,
  rssMb,
  seedContacts,
  steadyLoad,
  BENCH_PRODUCTION_DECISIONS,
} from './support.js';

const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SEED_ROWS = 100_000;
const IMPORT_ROWS = 100_000;
const CONNECTIONS = 16;
const RUN_SECONDS = Number(process.env.BENCH_RUN_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const STEADY_RATE = 100;
const STEADY_SECONDS = 15;

/**
 * V8 heap settings of the service process, as a deployment with a memory budget sets them
 * (NODE_OPTIONS). With Node's defaults the heap grows with garbage, not with live data: an export
 * allocates fast, V8 lets the young generation and then the old one expand instead of collecting,
 * and RSS peaks near 480 MB though the live heap after a collection stays near 76 MB. A small young
 * generation and an old-generation cap keep the peak near 260 MB at about the same speed.
 * `BENCH_NODE_FLAGS=` (empty) measures with Node's defaults.
 */
const SERVICE_NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '--max-semi-space-size=8 --max-old-space-size=192')
  .split(' ')
  .filter(Boolean);

const here = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------------------------------------
// Child processes

/**
 * The contact management service as it is deployed on its own: the contacts subgraph, the gateway
 * and the contacts REST adapter in one process (the other subgraphs are not started: a contacts
 * query never reaches them), on free ports.
 */
async function servePlatform(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'contacts-bench-'));
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
  const subgraph = await startContactsSubgraph(deps, { port: 0 });
  const gateway = await startGateway(deps, { port: 0, subgraphUrls: { contacts: subgraph.url } });
  const adapter = await startContactsRest(deps, { port: 0, client: gateway.client, contactsSubgraphUrl: subgraph.url });
  process.send?.({ ready: true, urls: { rest: adapter.url, gateway: gateway.url, subgraph: subgraph.url } });
  process.on('SIGTERM', () => {
    void (async () => {
      for (const part of [adapter, gateway, subgraph]) await part.close();
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    })();
  });
}

async function serveFloorChild(): Promise<void> {
  const floor = await serveFloor(process.env.BENCH_PLATFORM_DATABASE_URL);
  process.send?.({ ready: true, urls: { floor: floor.url } });
  process.on('SIGTERM', () => void floor.close().finally(() => process.exit(0)));
}

interface Child {
  process: ChildProcess;
  urls: Record<string, string>;
  stop(): Promise<void>;
}

function startChild(role: 'platform' | 'floor', databaseUrl: string): Promise<Child> {
  const child = fork(here, [`--serve-${role}`], {
    env: { ...process.env, BENCH_PLATFORM_DATABASE_URL: databaseUrl },
    // BENCH_PROFILE=<folder>: CPU profiles of the platform process, to see where its time goes.
    execArgv: [
      ...(role === 'platform' && process.env.BENCH_PROFILE
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
        : []),
      ...(role === 'platform' ? SERVICE_NODE_FLAGS : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${role} exited with ${code} before it was ready`)));
    child.once('message', (message: { urls: Record<string, string> }) => {
      child.removeAllListeners('exit');
      resolve({
        process: child,
        urls: message.urls,
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

// ---------------------------------------------------------------------------------------------
// Measuring

/** Runs `work` while sampling the RSS of `pid` every 20 ms; answers its duration and the peak. */
async function measure<T>(
  pid: number,
  work: () => Promise<T>,
): Promise<{ result: T; seconds: number; peakRssMb: number; baseRssMb: number }> {
  const baseRssMb = rssMb(pid);
  let peakRssMb = baseRssMb;
  const sampler = setInterval(() => {
    peakRssMb = Math.max(peakRssMb, rssMb(pid));
  }, 20);
  const started = performance.now();
  try {
    const result = await work();
    const seconds = (performance.now() - started) / 1000;
    peakRssMb = Math.max(peakRssMb, rssMb(pid));
    return { result, seconds, peakRssMb, baseRssMb };
  } finally {
    clearInterval(sampler);
  }
}

interface Target {
  name: string;
  options: () => autocannon.Options;
}

function restTarget(name: string, base: string): Target {
  return {
    name,
    options: () => ({
      url: base,
      requests: [
        {
          method: 'GET',
          setupRequest: (request) => ({ ...request, path: `/api/contacts?search=${randomWord()}` }),
        },
      ],
    }),
  };
}

function graphqlTarget(name: string, url: string, operation: string): Target {
  return {
    name,
    options: () => ({
      url,
      requests: [
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({ query: operation, variables: { search: randomWord() } }),
          }),
        },
      ],
    }),
  };
}

async function run(options: autocannon.Options, onResponseTime?: (ms: number) => void): Promise<autocannon.Result> {
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (error, finished) => (error ? reject(error as Error) : resolve(finished)));
    if (onResponseTime)
      instance.on('response', (_client, _status, _bytes, responseTime) => onResponseTime(responseTime));
  });
  if (result.non2xx || result.errors)
    throw new Error(`${options.url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Data

async function writeImportFile(file: string): Promise<number> {
  async function* lines() {
    yield 'First Name,Last Name,Email,Phone,Company,Tags\n';
    for (let i = 1; i <= IMPORT_ROWS; i++) {
      yield `Imported${i},Row ${i % 97},imported${i}@bench-import.example,+44 20 ${String(i).padStart(6, '0')},"Import ${i % 50}, Ltd","csv;batch${i % 10}"\n`;
    }
  }
  await pipeline(Readable.from(lines()), createWriteStream(file));
  return IMPORT_ROWS;
}

async function exportCount(restUrl: string, query: string): Promise<number> {
  const response = await fetch(`${restUrl}/api/contacts/export${query}`);
  if (response.status !== 200 || !response.body) throw new Error(`export answered ${response.status}`);
  let records = 0;
  const parser = parse({ bom: true });
  parser.on('readable', () => {
    while (parser.read() !== null) records++;
  });
  await pipeline(Readable.fromWeb(response.body as never), parser);
  return records - 1;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const name = `bench_contacts_${process.pid}`;
  const admin = new pg.Client({ connectionString: SERVER });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const children: Child[] = [];
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'contacts-bench-files-'));
  let db: pg.Client | undefined;

  try {
    console.log(`contacts bench on ${os.cpus().length} cores, PostgreSQL ${url.host}, database ${name}`);
    const platform = await startChild('platform', databaseUrl);
    children.push(platform);
    const floor = await startChild('floor', databaseUrl);
    children.push(floor);
    console.log(
      `contacts service process (subgraph, gateway, REST adapter; ` +
        `node ${SERVICE_NODE_FLAGS.join(' ') || 'with default flags'}): RSS ${fmt(rssMb(platform.process.pid!))} MB after start`,
    );

    db = new pg.Client({ connectionString: databaseUrl });
    db.on('error', () => undefined);
    await db.connect();
    const started = performance.now();
    await seedContacts(db, SEED_ROWS);
    console.log(`seeded ${SEED_ROWS} contacts in ${fmt((performance.now() - started) / 1000, 1)} s`);

    const operation = String(ContactPageDocument);
    const targets: Target[] = [
      restTarget('floor (Express + pg)', floor.urls.floor),
      graphqlTarget('subgraph (GraphQL)', platform.urls.subgraph, operation),
      graphqlTarget('gateway (GraphQL)', platform.urls.gateway, operation),
      restTarget('REST adapter', platform.urls.rest),
    ];

    // BENCH_TARGETS=subgraph,gateway: only those (and the floor), e.g. to profile one layer.
    const only = process.env.BENCH_TARGETS?.split(',');
    if (only)
      targets.splice(
        1,
        targets.length,
        ...targets.slice(1).filter((target) => only.some((name) => target.name.startsWith(name))),
      );

    // Warm-up: JIT, connection pools, query plans.
    for (const target of targets) await run({ ...target.options(), connections: CONNECTIONS, duration: 2 });

    const rates = new Map<string, number[]>(targets.map((target) => [target.name, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      // Interleaved, and in a different order each round, so drift of the machine hits all alike.
      const order = round % 2 ? targets : [...targets].reverse();
      for (const target of order) {
        const result = await run({ ...target.options(), connections: CONNECTIONS, duration: RUN_SECONDS });
        rates.get(target.name)!.push(result.requests.average);
      }
      console.log(
        `round ${round}/${ROUNDS}: ${targets.map((t) => `${t.name} ${fmt(rates.get(t.name)!.at(-1)!)}`).join(', ')}`,
      );
    }
    const floorRate = median(rates.get(targets[0].name)!);
    console.log(
      `\nsearch GET /api/contacts?search=<word>, ${CONNECTIONS} connections, median of ${ROUNDS} runs of ${RUN_SECONDS} s:`,
    );
    for (const target of targets) {
      const rate = median(rates.get(target.name)!);
      console.log(
        `  ${target.name.padEnd(22)} ${fmt(rate).padStart(6)} req/s   ${fmt(rate / floorRate, 2)} of the floor`,
      );
    }
    const chain = median(rates.get('REST adapter') ?? [0]) / floorRate;
    console.log(
      `  REST through the whole chain: ${fmt(chain, 2)} of the floor (target 0.45 or better: ${chain >= 0.45 ? 'met' : 'MISSED'})`,
    );

    // CPU time per request of the serving Node process: unlike requests per second, it hardly
    // moves when other work shares the machine, and it shows what each layer costs.
    const CPU_REQUESTS = 2000;
    console.log(`\nNode CPU per request of the serving process (${CPU_REQUESTS} requests, 8 connections):`);
    const floorPid = floor.process.pid!;
    const servicePid = platform.process.pid!;
    let floorCpu = 0;
    for (const target of targets) {
      const pid = target === targets[0] ? floorPid : servicePid;
      const before = cpuSeconds(pid);
      await run({ ...target.options(), connections: 8, amount: CPU_REQUESTS });
      const perRequest = ((cpuSeconds(pid) - before) / CPU_REQUESTS) * 1000;
      if (target === targets[0]) floorCpu = perRequest;
      console.log(
        `  ${target.name.padEnd(22)} ${fmt(perRequest, 2).padStart(6)} ms   ${fmt(perRequest / floorCpu, 1)}x the floor`,
      );
    }

    const times = await steadyLoad(platform.urls.rest, STEADY_RATE, STEADY_SECONDS, () => ({
      path: `/api/contacts?search=${randomWord()}`,
    }));
    const at = (share: number) => percentile(times, share);
    const p95 = at(0.95);
    console.log(
      `\nsteady ${STEADY_RATE} req/s through the REST adapter for ${STEADY_SECONDS} s (one request ` +
        `every ${1000 / STEADY_RATE} ms): ${times.length} requests, p50 ${fmt(at(0.5), 1)} ms, ` +
        `p95 ${fmt(p95, 1)} ms, p99 ${fmt(at(0.99), 1)} ms (target p95 < 50 ms: ${p95 < 50 ? 'met' : 'MISSED'})`,
    );

    if (process.env.BENCH_SKIP_FILES) return;
    // A fresh service process for the file phases: its heap has not been grown by the load above,
    // so the peaks below are what an export or an import costs on top of an idle service.
    await platform.stop();
    children.splice(children.indexOf(platform), 1);
    const files = await startChild('platform', databaseUrl);
    children.push(files);
    const pid = files.process.pid!;
    const restUrl = files.urls.rest;
    console.log(`\nfresh contacts service process for exports and import: RSS ${fmt(rssMb(pid))} MB after start`);
    const expected = Number(
      (await db.query<{ count: string }>('select count(*) from contacts.contact where not deleted')).rows[0].count,
    );
    const exportAll = await measure(pid, () => exportCount(restUrl, ''));
    if (exportAll.result !== expected)
      throw new Error(`export wrote ${exportAll.result} rows; ${expected} contacts exist`);
    console.log(
      `export of ${exportAll.result} contacts: ${fmt(exportAll.seconds, 2)} s, peak ` +
        `RSS ${fmt(exportAll.peakRssMb)} MB (before: ${fmt(exportAll.baseRssMb)} MB) (targets < 10 s, < 300 MB)`,
    );
    // One contact in ten carries this tag, and no generated name begins with it.
    const expected10k = Number(
      (
        await db.query<{ count: string }>(
          `select count(*) from contacts.contact where not deleted and tags @> array['press']`,
        )
      ).rows[0].count,
    );
    const export10k = await measure(pid, () => exportCount(restUrl, '?search=press'));
    if (export10k.result !== expected10k)
      throw new Error(`export wrote ${export10k.result} rows; ${expected10k} contacts match`);
    console.log(
      `export of ${export10k.result} contacts (search=press): ${fmt(export10k.seconds, 2)} s, peak ` +
        `RSS ${fmt(export10k.peakRssMb)} MB (before: ${fmt(export10k.baseRssMb)} MB)`,
    );

    const file = path.join(workDir, 'import.csv');
    await writeImportFile(file);
    const form = new FormData();
    form.append('file', await openAsBlob(file, { type: 'text/csv' }), 'import.csv');
    const imported = await measure(pid, async () => {
      const response = await fetch(`${restUrl}/api/contacts/import`, { method: 'POST', body: form });
      const body = (await response.json()) as { created: number; updated: number; skipped: number };
      if (response.status !== 200) throw new Error(`import answered ${response.status}: ${JSON.stringify(body)}`);
      return body;
    });
    console.log(
      `import of a ${IMPORT_ROWS}-row CSV: ${fmt(imported.seconds, 2)} s, peak RSS ${fmt(imported.peakRssMb)} ` +
        `MB (before: ${fmt(imported.baseRssMb)} MB); created ${imported.result.created}, ` +
        `updated ${imported.result.updated}, skipped ${imported.result.skipped} (targets < 20 s, < 300 MB)`,
    );
  } finally {
    await db?.end().catch(() => undefined);
    for (const child of children.reverse()) await child.stop();
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
    rmSync(workDir, { recursive: true, force: true });
  }
}

exitWithHelpIfAsked(`
usage: npm run bench:contacts

Speed and memory of the contact management service on PostgreSQL (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/postgres; a database of its own is made and dropped): the same
search four ways against a hand-written floor, latency at a steady rate, export and import of
100,000 contacts. BENCH_RUN_SECONDS, BENCH_ROUNDS, BENCH_NODE_FLAGS and BENCH_PROFILE tune it.
`);

if (process.argv.includes('--serve-platform')) {
  await servePlatform();
} else if (process.argv.includes('--serve-floor')) {
  await serveFloorChild();
} else {
  await main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
