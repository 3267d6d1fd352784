/**
 * `npm run bench:chain`: what the federation around a request costs, against a hand-written floor.
 *
 * On PostgreSQL with 100,000 contacts (seeded by SQL), in one interleaved run at 16 connections:
 * - contact by id: the floor (bench/floor.ts: Express 5 + pg, parameterized), GraphQL straight to
 *   the contacts subgraph, the gateway's `contact(id)` (REST's operation text, and a manifest's
 *   document sent by `documentId` as a frontend with TRUSTED_DOCUMENTS does), REST
 *   `GET /api/contacts/{id}`, and Hive Gateway serving schema/supergraph.graphql in front of the same subgraphs;
 * - search: the floor, the subgraph, the gateway and REST `GET /api/contacts?search=<word>`;
 * - writes: `POST /api/contacts` (a new contact, unique e-mail) and `PUT /api/contacts/{id}` (a new
 *   company) through the floor, the gateway's mutations and REST. The contacts they create are deleted
 *   before each search is measured, so every search runs on the seeded book.
 * For each: requests per second, p50/p99, CPU per request of every process on the path (Node and the
 * PostgreSQL backends), and the ratio to the floor. Then what one client sees: the median of 200
 * sequential keep-alive REST by-id requests, and p50/p99 at a steady 200 requests per second.
 *
 * The platform runs in two seats: in one process (startPlatform, as `npm start` with
 * WEB_CONCURRENCY=1) against the floor in one process, and exactly as `npm start` runs it on
 * PostgreSQL (a worker per CPU, BENCH_WORKERS) against the floor in as many node:cluster processes;
 * there REST by id, search, the writes and the manifest's document by `documentId` are measured.
 * The floor and Hive Gateway run in processes of their own, the load in this one.
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type autocannon from 'autocannon';
import pg from 'pg';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { freePort } from '#test/support/ports.js';
import {
  ContactDocument,
  ContactPageDocument,
  CreateContactDocument,
  UpdateContactDocument,
} from '#rest-adapters/contacts/operations.generated.js';
import { writeContactManifest } from './manifest.js';
import {
  SERVE,
  benchDatabase,
  childrenOf,
  cpuSeconds,
  fmt,
  median,
  percentile,
  postgresCpu,
  postgresCpuSince,
  randomWord,
  runLoad,
  seedContacts,
  sequentialLoad,
  startChild,
  startNpmStart,
  steadyLoad,
  stopProcess,
  type Child,
} from './support.js';

const SEED_ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const CONNECTIONS = 16;
const RUN_SECONDS = Number(process.env.BENCH_RUN_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IDLE_REQUESTS = 200;
const STEADY_RATE = 200;
const STEADY_SECONDS = Number(process.env.BENCH_STEADY_SECONDS ?? 10);
/** npm start's workers on PostgreSQL: one per CPU unless BENCH_WORKERS says otherwise. */
const WORKERS = Number(process.env.BENCH_WORKERS ?? os.availableParallelism());
const HIVE_CLI = path.join(PROJECT_ROOT, 'node_modules', '@graphql-hive', 'gateway', 'dist', 'bin.js');

/** Hive Gateway as an operator runs it: its CLI, from the project root (gateway.config.ts), on the checked-in supergraph. */
async function startHive(urls: Record<string, string>): Promise<Child> {
  const port = await freePort();
  const child = spawn(process.execPath, [HIVE_CLI, 'supergraph', 'schema/supergraph.graphql'], {
    cwd: PROJECT_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      GATEWAY_PORT: String(port),
      SOCIAL_SUBGRAPH_URL: urls.socialSubgraph,
      SURVEYS_SUBGRAPH_URL: urls.surveysSubgraph,
      CONTACTS_SUBGRAPH_URL: urls.contactsSubgraph,
    },
    stdio: ['ignore', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error('Hive Gateway exited before it was ready');
    if (
      await fetch(`${base}/readyz`).then(
        (response) => response.ok,
        () => false,
      )
    ) {
      return { process: child, urls: { hive: `${base}/graphql` }, stop: () => stopProcess(child) };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error('Hive Gateway not ready after 60 s');
}

const KINDS = ['by id', 'search', 'create', 'update'] as const;
type Kind = (typeof KINDS)[number];

const KIND_TITLES: Record<Kind, string> = {
  'by id': 'contact by id',
  search: 'search (page of 20 and its total)',
  create: 'create (POST /api/contacts, createContact)',
  update: 'update (PUT /api/contacts/{id}, updateContact)',
};

interface Target {
  name: string;
  kind: Kind;
  /** How many processes serve it: 1, or npm start's workers (then compared with the floor in as many). */
  seat: number;
  /** The Node processes on the path, by the name they are reported under (a cluster's primary and workers under one name). */
  processes: Record<string, number[]>;
  options: () => autocannon.Options;
}

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  /** CPU ms per request, by process name, and `postgres`. */
  cpu: Record<string, number>;
}

async function main(): Promise<void> {
  const database = await benchDatabase('bench_chain');
  const children: Child[] = [];
  const admin = new pg.Client({ connectionString: database.url });
  const manifestDir = mkdtempSync(path.join(os.tmpdir(), 'bench-chain-manifest-'));
  try {
    console.log(
      `chain bench on ${os.cpus().length} cores, ${os.loadavg()[0].toFixed(2)} load, database ${database.name}`,
    );
    // The one-process platform's manifest holds `contact(id)`, asked for by `documentId` as a frontend does.
    const manifest = writeContactManifest(manifestDir);
    const env = { BENCH_PLATFORM_DATABASE_URL: database.url, TRUSTED_DOCUMENTS: manifest.file };
    const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
    const platform = await startChild(SERVE, ['platform'], env, profile);
    children.push(platform);
    const floor = await startChild(SERVE, ['floor'], env);
    children.push(floor);
    const hive = await startHive(platform.urls);
    children.push(hive);
    // npm start's real shape on PostgreSQL: a worker per CPU; the floor gets as many processes.
    const floorWorkers = await startChild(SERVE, ['floor'], { ...env, BENCH_FLOOR_WORKERS: String(WORKERS) });
    children.push(floorWorkers);
    // Its gateway takes the same manifest, so that a document by id is measured as npm start runs it too.
    const npmStart = await startNpmStart(database.url, WORKERS, { TRUSTED_DOCUMENTS: manifest.file });
    children.push(npmStart);

    await admin.connect();
    const started = performance.now();
    await seedContacts(admin, SEED_ROWS);
    console.log(`seeded ${SEED_ROWS} contacts in ${fmt((performance.now() - started) / 1000, 1)} s`);
    const ids = (
      await admin.query<{ id: string }>('select id from contacts.contact order by random() limit 1000')
    ).rows.map((row) => row.id);
    const randomId = () => ids[Math.floor(Math.random() * ids.length)];
    let written = 0;
    const newContact = () => ({ firstName: 'Bench', lastName: 'Writer', email: `writer${++written}@chain.example` });
    const change = () => ({ company: `Company ${++written}` });
    /** Method, path and JSON body of one REST request of each kind. */
    const restRequest = (kind: Kind): { method: 'GET' | 'POST' | 'PUT'; path: string; body?: string } => {
      switch (kind) {
        case 'by id':
          return { method: 'GET', path: `/api/contacts/${randomId()}` };
        case 'search':
          return { method: 'GET', path: `/api/contacts?search=${randomWord()}` };
        case 'create':
          return { method: 'POST', path: '/api/contacts', body: JSON.stringify(newContact()) };
        case 'update':
          return { method: 'PUT', path: `/api/contacts/${randomId()}`, body: JSON.stringify(change()) };
      }
    };
    /** The operation and variables of one GraphQL request of each kind. */
    const graphqlRequest = (kind: Kind | 'by documentId') => {
      switch (kind) {
        case 'by id':
          return { query: String(ContactDocument), variables: { id: randomId() } };
        case 'by documentId':
          return { documentId: manifest.documentId, variables: { id: randomId() } };
        case 'search':
          return { query: String(ContactPageDocument), variables: { search: randomWord() } };
        case 'create':
          return { query: String(CreateContactDocument), variables: { input: newContact() } };
        case 'update':
          return { query: String(UpdateContactDocument), variables: { id: randomId(), input: change() } };
      }
    };

    const pids = {
      platform: [platform.process.pid!],
      floor: [floor.process.pid!],
      hive: [hive.process.pid!],
      floorWorkers: [floorWorkers.process.pid!, ...childrenOf(floorWorkers.process.pid!)],
      npmStart: npmStart.pids(),
    };
    const rest = (
      name: string,
      kind: Target['kind'],
      base: string,
      processes: Record<string, number[]>,
      seat = 1,
    ): Target => ({
      name,
      kind,
      seat,
      processes,
      options: () => ({
        url: base,
        requests: [
          {
            setupRequest: (request) => {
              const { method, path, body } = restRequest(kind);
              return body
                ? { ...request, method, path, body, headers: { 'content-type': 'application/json' } }
                : { ...request, method, path };
            },
          },
        ],
      }),
    });
    const graphql = (
      name: string,
      kind: Target['kind'],
      url: string,
      processes: Record<string, number[]>,
      sent: Kind | 'by documentId' = kind,
      seat = 1,
    ): Target => ({
      name,
      kind,
      seat,
      processes,
      options: () => ({
        url,
        requests: [
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            setupRequest: (request) => ({ ...request, body: JSON.stringify(graphqlRequest(sent)) }),
          },
        ],
      }),
    });
    const targets: Target[] = [
      rest('floor', 'by id', floor.urls.floor, { node: pids.floor }),
      graphql('contacts subgraph', 'by id', platform.urls.contactsSubgraph, { node: pids.platform }),
      graphql('gateway contact(id)', 'by id', platform.urls.gateway, { node: pids.platform }),
      graphql('gateway by documentId', 'by id', platform.urls.gateway, { node: pids.platform }, 'by documentId'),
      rest('REST GET /api/contacts/{id}', 'by id', platform.urls.rest, { node: pids.platform }),
      graphql('Hive Gateway contact(id)', 'by id', hive.urls.hive, { hive: pids.hive, node: pids.platform }),
      rest(`floor, ${WORKERS} processes`, 'by id', floorWorkers.urls.floor, { node: pids.floorWorkers }, WORKERS),
      rest(`REST by id, npm start`, 'by id', npmStart.urls.rest, { node: pids.npmStart }, WORKERS),
      graphql(
        'gateway by documentId, npm start',
        'by id',
        npmStart.urls.gateway,
        { node: pids.npmStart },
        'by documentId',
        WORKERS,
      ),
      rest('floor', 'search', floor.urls.floor, { node: pids.floor }),
      graphql('contacts subgraph', 'search', platform.urls.contactsSubgraph, { node: pids.platform }),
      graphql('gateway contactPage', 'search', platform.urls.gateway, { node: pids.platform }),
      rest('REST GET /api/contacts?search', 'search', platform.urls.rest, { node: pids.platform }),
      rest(`floor, ${WORKERS} processes`, 'search', floorWorkers.urls.floor, { node: pids.floorWorkers }, WORKERS),
      rest(`REST search, npm start`, 'search', npmStart.urls.rest, { node: pids.npmStart }, WORKERS),
      rest('floor', 'create', floor.urls.floor, { node: pids.floor }),
      graphql('gateway createContact', 'create', platform.urls.gateway, { node: pids.platform }),
      rest('REST POST /api/contacts', 'create', platform.urls.rest, { node: pids.platform }),
      rest(`floor, ${WORKERS} processes`, 'create', floorWorkers.urls.floor, { node: pids.floorWorkers }, WORKERS),
      rest(`REST create, npm start`, 'create', npmStart.urls.rest, { node: pids.npmStart }, WORKERS),
      rest('floor', 'update', floor.urls.floor, { node: pids.floor }),
      graphql('gateway updateContact', 'update', platform.urls.gateway, { node: pids.platform }),
      rest('REST PUT /api/contacts/{id}', 'update', platform.urls.rest, { node: pids.platform }),
      rest(`floor, ${WORKERS} processes`, 'update', floorWorkers.urls.floor, { node: pids.floorWorkers }, WORKERS),
      rest(`REST update, npm start`, 'update', npmStart.urls.rest, { node: pids.npmStart }, WORKERS),
    ];
    const only = process.env.BENCH_TARGETS?.split(',');
    const chosen = only
      ? targets.filter((target) => target.name.startsWith('floor') || only.some((name) => target.name.includes(name)))
      : targets;

    // Warm-up: JIT, connection pools, query plans.
    for (const target of chosen) await runLoad({ ...target.options(), connections: CONNECTIONS, duration: 2 });

    const samples = new Map<Target, Sample[]>(chosen.map((target) => [target, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      // Interleaved, in a different order each round, so drift of the machine hits all alike.
      for (const target of round % 2 ? chosen : [...chosen].reverse()) {
        // A search is measured on the seeded book. The contacts the create targets wrote are the newest,
        // and a search of a common word walks the newest-first index past all of them (tens of
        // thousands that match nothing): 17 ms of PostgreSQL per search instead of 1, the floor's and the
        // chain's alike, so the ratio measured that walk rather than the chain. They leave first.
        if (target.kind === 'search') {
          await admin.query(`delete from contacts.contact where email like 'writer%@chain.example'`);
          await admin.query('vacuum analyze contacts.contact');
        }
        const cpuOf = (pidList: number[]) => pidList.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
        const cpuBefore = Object.fromEntries(
          Object.entries(target.processes).map(([name, pidList]) => [name, cpuOf(pidList)]),
        );
        const pgBefore = await postgresCpu(admin, database.name);
        const result = await runLoad({ ...target.options(), connections: CONNECTIONS, duration: RUN_SECONDS });
        const cpu: Record<string, number> = {};
        for (const [name, pidList] of Object.entries(target.processes))
          cpu[name] = ((cpuOf(pidList) - cpuBefore[name]) / result.requests.total) * 1000;
        cpu.postgres = ((await postgresCpuSince(admin, database.name, pgBefore)) / result.requests.total) * 1000;
        samples
          .get(target)!
          .push({ rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpu });
      }
      console.log(`round ${round}/${ROUNDS} done`);
    }

    for (const kind of KINDS) {
      const ofKind = chosen.filter((target) => target.kind === kind);
      const floorRps = (seat: number) =>
        median(
          samples
            .get(ofKind.find((target) => target.name.startsWith('floor') && target.seat === seat)!)
            ?.map((sample) => sample.rps) ?? [NaN],
        );
      console.log(`\n${KIND_TITLES[kind]}, ${CONNECTIONS} connections, median of ${ROUNDS} runs of ${RUN_SECONDS} s:`);
      console.log(
        `  ${'path'.padEnd(30)} ${'req/s'.padStart(7)} ${'/floor'.padStart(7)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)}   CPU ms per request`,
      );
      for (const target of ofKind) {
        const runs = samples.get(target)!;
        const rps = median(runs.map((sample) => sample.rps));
        const cpu = Object.keys(runs[0].cpu)
          .map((name) => `${name} ${fmt(median(runs.map((sample) => sample.cpu[name])), 2)}`)
          .join(' + ');
        console.log(
          `  ${target.name.padEnd(30)} ${fmt(rps).padStart(7)} ${fmt(rps / floorRps(target.seat), 2).padStart(7)} ` +
            `${fmt(median(runs.map((s) => s.p50)), 1).padStart(7)} ${fmt(median(runs.map((s) => s.p99)), 1).padStart(7)} ` +
            `  ${cpu}`,
        );
      }
      if (kind === 'by id') {
        const rpsOf = (name: string) =>
          median(
            samples.get(ofKind.find((target) => target.name.startsWith(name))!)?.map((sample) => sample.rps) ?? [0],
          );
        if (
          ofKind.some((target) => target.name.startsWith('Hive')) &&
          ofKind.some((target) => target.name.startsWith('REST'))
        ) {
          console.log(
            `  REST by id / Hive Gateway: ${fmt(rpsOf('REST') / rpsOf('Hive'), 2)}x (target 1.5x); ` +
              `gateway / Hive: ${fmt(rpsOf('gateway') / rpsOf('Hive'), 2)}x`,
          );
        }
      }
    }

    const byId = () => ({ path: `/api/contacts/${randomId()}` });
    for (const [name, base] of [
      ['floor', floor.urls.floor],
      ['REST', platform.urls.rest],
      ['REST (npm start)', npmStart.urls.rest],
    ] as const) {
      const idle = (await sequentialLoad(base, IDLE_REQUESTS, byId)).sort((a, b) => a - b);
      const steady = await steadyLoad(base, STEADY_RATE, STEADY_SECONDS, byId);
      // autocannon's rate limit (-R 50 -c 10) sends each connection's budget for the second at its
      // start: ten requests at once, five deep. Its p50 is the queue behind that burst, not a wait.
      const burst = await runLoad({
        url: base,
        connections: 10,
        overallRate: 50,
        duration: STEADY_SECONDS,
        requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, ...byId() }) }],
      });
      console.log(
        `\n${name} by id: idle (${IDLE_REQUESTS} sequential keep-alive requests) p50 ${fmt(percentile(idle, 0.5), 2)} ms; ` +
          `steady ${STEADY_RATE} req/s for ${STEADY_SECONDS} s: p50 ${fmt(percentile(steady, 0.5), 2)} ms, ` +
          `p99 ${fmt(percentile(steady, 0.99), 2)} ms; autocannon -R 50 -c 10 (bursts): p50 ${fmt(burst.latency.p50, 1)} ms`,
      );
    }
  } finally {
    await admin.end().catch(() => undefined);
    for (const child of children.reverse()) await child.stop();
    await database.drop();
    rmSync(manifestDir, { recursive: true, force: true });
  }
}

exitWithHelpIfAsked(`
usage: npm run bench:chain

The federated chain against a hand-written Express + pg floor on PostgreSQL (BENCH_DATABASE_URL,
default postgres://postgres@127.0.0.1:5432/postgres; a database of its own is made and dropped), 100,000
contacts: contact by id and search through the subgraph, the gateway (by id also a manifest's document
sent by documentId), REST and Hive Gateway, and creates and updates through the gateway and REST; RPS,
p50/p99, CPU per request per process, ratios; idle and steady-rate latency. BENCH_RUN_SECONDS,
BENCH_ROUNDS, BENCH_TARGETS (e.g. REST,Hive), BENCH_WORKERS (npm start's workers; default one per
CPU), BENCH_LOG_LEVEL and BENCH_PROFILE (a folder for --cpu-prof of the one-process platform) tune it.
`);

await main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
