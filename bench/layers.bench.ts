/**
 * `npm run bench:layers`: where a REST read's Node CPU goes, layer by layer, against the floor's whole
 * request. On PostgreSQL with 100,000 contacts (seeded by SQL), for a contact by id and a search page:
 * - in this process (the whole platform started here, its logs to /dev/null): the contacts service
 *   alone (`ContactService.read` / `.list`), the subgraph in process (`LocalSubgraph.execute`: context,
 *   shield, compiled execution) and the gateway as a REST adapter calls it, on its short path (the
 *   fixed operation straight on the subgraph, gateway/short-path.ts) and on its full path (Apollo
 *   Server's `executeOperation` and Apollo Gateway, a second gateway with GATEWAY_SHORT_PATH=false),
 *   each by 16 concurrent callers, CPU per operation from `process.cpuUsage()`;
 * - over HTTP, each in a process of its own and loaded by autocannon from here: REST as `npm start`
 *   serves it in one process, with the short path and without, and the floor (bench/floor.ts), CPU
 *   per request from /proc.
 * Each layer includes the ones above it (the two paths of a layer are alternatives). PostgreSQL's own time is left out: every layer asks it the same.
 */
import 'reflect-metadata';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { createLogger } from '#lib/observability/logger.js';
import { ContactDocument, ContactPageDocument } from '#rest-adapters/contacts/operations.generated.js';
import { startGateway } from '#gateway/gateway.js';
import { REST_OPERATION_TEXTS } from '#rest-adapters/operation-texts.js';
import { startPlatform } from '#scripts/platform.js';
import { ContactService, createSearchEstimates } from '#subgraphs/contacts/contact/contact.service.js';
import {
  benchPlatformConfig,
  SERVE,
  benchDatabase,
  cpuSeconds,
  fmt,
  median,
  randomWord,
  runLoad,
  seedContacts,
  startChild,
  type Child,
} from './support.js';

const SEED_ROWS = 100_000;
const CALLERS = 16;
const SECONDS = Number(process.env.BENCH_RUN_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** CPU ms of this process per operation, `CALLERS` callers calling `operation` for `SECONDS`. */
async function inProcess(operation: () => Promise<unknown>): Promise<number> {
  const end = performance.now() + SECONDS * 1000;
  let done = 0;
  const before = process.cpuUsage();
  const caller = async () => {
    while (performance.now() < end) {
      await operation();
      done++;
    }
  };
  await Promise.all(Array.from({ length: CALLERS }, caller));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / done;
}

/** CPU ms of `child`'s process per request, autocannon sending `path()` from here. */
async function overHttp(child: Child, base: string, path: () => string): Promise<number> {
  const options = {
    url: base,
    connections: CALLERS,
    requests: [{ setupRequest: (r: object) => ({ ...r, path: path() }) }],
  };
  const before = cpuSeconds(child.process.pid!);
  const result = await runLoad({ ...options, duration: SECONDS });
  return ((cpuSeconds(child.process.pid!) - before) * 1000) / result.requests.total;
}

async function main(): Promise<void> {
  const database = await benchDatabase('bench_layers');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-layers-'));
  const children: Child[] = [];
  const stops: Array<() => Promise<void>> = [];
  const config = benchPlatformConfig(dataDir, database.url);
  const logger = createLogger(config, createWriteStream('/dev/null'));
  const platform = await startPlatform(config, logger);
  const admin = new pg.Client({ connectionString: database.url });
  try {
    console.log(`layers bench on ${os.cpus().length} cores, ${os.loadavg()[0].toFixed(2)} load`);
    await admin.connect();
    await seedContacts(admin, SEED_ROWS);
    const ids = (await admin.query<{ id: string }>('select id from contacts.contact order by random() limit 1000'))
      .rows;
    const randomId = () => ids[Math.floor(Math.random() * ids.length)].id;
    const env = { BENCH_PLATFORM_DATABASE_URL: database.url };
    const rest = await startChild(SERVE, ['platform'], { ...env, GATEWAY_SHORT_PATH: 'true' });
    children.push(rest);
    const restFullPath = await startChild(SERVE, ['platform'], { ...env, GATEWAY_SHORT_PATH: 'false' });
    children.push(restFullPath);
    // The full path in this process: a second gateway over the same subgraphs, its short path off.
    const { social, surveys, contacts: contactsSubgraph } = platform.subgraphs;
    const fullPath = await startGateway(
      { config: { ...config, env: { ...config.env, GATEWAY_SHORT_PATH: 'false' } }, logger },
      {
        port: 0,
        subgraphUrls: {},
        localSubgraphs: { social: social.local, surveys: surveys.local, contacts: contactsSubgraph.local },
        restOperations: REST_OPERATION_TEXTS,
      },
    );
    stops.push(() => fullPath.close());
    const floor = await startChild(SERVE, ['floor'], env);
    children.push(floor);

    const contacts = platform.subgraphs.contacts;
    const estimates = createSearchEstimates();
    const service = () => new ContactService(contacts.orm.em.fork(), estimates);
    const caller = { forwardHeaders: {}, requestId: 'bench-layers' };
    const kinds = {
      'by id': {
        service: () => service().read(randomId()),
        query: String(ContactDocument),
        variables: () => ({ id: randomId() }),
        path: () => `/api/contacts/${randomId()}`,
      },
      search: {
        service: () => service().list({ limit: 20, offset: 0 }, randomWord()),
        query: String(ContactPageDocument),
        variables: () => ({ search: randomWord() }),
        path: () => `/api/contacts?search=${randomWord()}`,
      },
    };
    for (const [kind, layer] of Object.entries(kinds)) {
      const layers: Record<string, () => Promise<number>> = {
        'ContactService alone': () => inProcess(layer.service),
        '+ the subgraph in process': () =>
          inProcess(() =>
            contacts.local.execute({ query: layer.query, variables: layer.variables() }, { headers: {} }),
          ),
        '+ the gateway, short path': () =>
          inProcess(() => platform.gateway.client.execute(layer.query, layer.variables(), caller)),
        '+ the gateway, full path': () =>
          inProcess(() => fullPath.client.execute(layer.query, layer.variables(), caller)),
        '+ REST over HTTP, short path': () => overHttp(rest, rest.urls.rest, layer.path),
        '+ REST over HTTP, full path': () => overHttp(restFullPath, restFullPath.urls.rest, layer.path),
        'the floor, whole request': () => overHttp(floor, floor.urls.floor, layer.path),
      };
      for (const measure of Object.values(layers)) await measure(); // warm-up: JIT, pools, plans
      const samples = new Map<string, number[]>(Object.keys(layers).map((name) => [name, []]));
      for (let round = 0; round < ROUNDS; round++)
        for (const [name, measure] of Object.entries(layers)) samples.get(name)!.push(await measure());
      console.log(`\n${kind}: Node CPU ms per operation, median of ${ROUNDS} runs of ${SECONDS} s, ${CALLERS} callers`);
      for (const [name, values] of samples) console.log(`  ${name.padEnd(34)} ${fmt(median(values), 3).padStart(7)}`);
    }
  } finally {
    await admin.end().catch(() => undefined);
    for (const stop of stops) await stop();
    for (const child of children.reverse()) await child.stop();
    await platform.close();
    rmSync(dataDir, { recursive: true, force: true });
    await database.drop();
  }
}

exitWithHelpIfAsked(`
usage: npm run bench:layers

Where a REST read's Node CPU goes, layer by layer, on PostgreSQL (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/postgres; a database of its own is made and dropped) with 100,000
contacts: the contacts service alone, the subgraph in process, the gateway on its short path and on its
full path (each in this process), REST over HTTP with and without the short path and the hand-written
floor (each in a process of its own), for a contact by id and a search page. BENCH_RUN_SECONDS and
BENCH_ROUNDS tune it.
`);

await main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
