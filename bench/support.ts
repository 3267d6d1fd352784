/**
 * What the benchmarks share: a database of their own, contacts seeded by SQL, the hand-written
 * floor (bench/floor.ts) and the platform in child processes, load through autocannon, CPU and
 * memory read from /proc (Linux).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { PROJECT_ROOT } from '#lib/paths.js';
import { platformPorts } from '#test/support/ports.js';
import { BENCH_PRODUCTION_DECISIONS, benchPassedSettings } from './platform-config.js';

export { BENCH_PRODUCTION_DECISIONS, benchPlatformConfig } from './platform-config.js';

/** bench/serve.ts, compiled: the child process that serves the platform or the floor. */
export const SERVE = fileURLToPath(new URL('./serve.js', import.meta.url));

export const BENCH_SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Names are made of these syllables, picked by a hash of the row number: 144 two-syllable first
 * names and companies, 1,728 three-syllable last names, so a searched word finds from about 60
 * contacts (a last name) to about 2,000 (a two-syllable prefix: first names, companies, e-mail
 * addresses and the last names it begins), as a sales team's searches do in 100,000 contacts.
 */
const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'te', 'su', 'no', 'vi', 'be', 'do', 'pa', 'ri'];
const TAGS = ['vip', 'lead', 'partner', 'press', 'investor', 'customer', 'churned', 'trial', 'event', 'referral'];
/** The fixed list of searched words, half rare (last names), half common (two-syllable prefixes). */
export const SEARCH_WORDS = [
  'kalomi',
  'rateso',
  'vibedo',
  'sunopa',
  'mirate',
  'dopari',
  'tesuvi',
  'nokabe',
  'kalo',
  'rate',
  'vibe',
  'suno',
  'mira',
  'dopa',
  'tesu',
  'noka',
];
export const randomWord = () => SEARCH_WORDS[Math.floor(Math.random() * SEARCH_WORDS.length)];

/** `rows` contacts written by one INSERT ... SELECT (100,000 in a few seconds), then VACUUM ANALYZE and a CHECKPOINT. */
export async function seedContacts(client: pg.Client, rows: number): Promise<void> {
  const syllables = `array[${SYLLABLES.map((syllable) => `'${syllable}'`).join(',')}]`;
  const tags = `array[${TAGS.map((tag) => `'${tag}'`).join(',')}]`;
  const pick = (byte: number) => `(${syllables})[1 + get_byte(h, ${byte}) % ${SYLLABLES.length}]`;
  await client.query(`
    insert into contacts.contact (id, first_name, last_name, email, phone, company, tags, created_at, updated_at)
    select gen_random_uuid(), initcap(first), initcap(last), first || '.' || last || g || '@' || company || '.example',
      '+1 555 ' || lpad((g % 10000)::text, 4, '0'), initcap(company) || ' ' || (array['Inc', 'GmbH', 'Ltd', 'Labs'])[1 + g % 4],
      array[(${tags})[1 + g % ${TAGS.length}]], now() - g * interval '1 second', now()
    from (
      select g, ${pick(0)} || ${pick(1)} as first, ${pick(2)} || ${pick(3)} || ${pick(4)} as last, ${pick(5)} || ${pick(6)} as company
      from (select g, decode(md5(g::text), 'hex') as h from generate_series(1, ${rows}) g) hashed
    ) names`);
  await client.query('vacuum analyze contacts.contact');
  // A million rows leave a gigabyte of WAL and dirty pages behind: written out now, not by a checkpoint
  // in the middle of the measurement. What is measured is then a table at rest, as in production.
  await client.query('checkpoint');
}

/**
 * A database of its own on the bench server, dropped by `drop()`: empty, or a copy of `template` (a
 * database no one is connected to; PostgreSQL refuses the copy while anyone is, so it is tried again a few times).
 */
export async function benchDatabase(
  prefix: string,
  template?: string,
): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${process.pid}_${Date.now() % 100000}`;
  const admin = new pg.Client({ connectionString: BENCH_SERVER });
  await admin.connect();
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.query(`create database "${name}"${template ? ` template "${template}"` : ''}`);
      break;
    } catch (error) {
      // 55006: the template is still in use (a process that just closed its connections).
      if ((error as { code?: string }).code !== '55006' || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  const url = new URL(BENCH_SERVER);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      await admin.query(`drop database if exists "${name}" with (force)`);
      await admin.end();
    },
  };
}

export interface Child {
  process: ChildProcess;
  urls: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Runs `script` in a child process with `args` and waits for its `{ urls }` message; the child
 * answers SIGTERM by closing. Its output is dropped unless BENCH_VERBOSE is set.
 */
export function startChild(
  script: string,
  args: string[],
  env: Record<string, string | undefined>,
  execArgv: string[] = [],
): Promise<Child> {
  const child = fork(script, args, {
    env: { ...process.env, ...env },
    execArgv,
    stdio: ['ignore', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`${script} ${args.join(' ')} exited with ${code} before it was ready`)),
    );
    child.once('message', (message: { urls: Record<string, string> }) => {
      child.removeAllListeners('exit');
      resolve({ process: child, urls: message.urls, stop: () => stopProcess(child) });
    });
  });
}

/**
 * The Node flags `npm start` gives the platform (package.json: `exec node <flags> scripts/launch.mjs ...`),
 * so that a bench runs it as deployed (the young generation's cap, `--max-semi-space-size`).
 */
export const NPM_START_NODE_FLAGS: string[] = (() => {
  const scripts = (
    JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const match = /\bnode((?:\s+--[\w-]+(?:=\S+)?)*)\s+scripts\/launch\.mjs/.exec(scripts.start);
  return (match?.[1] ?? '').split(/\s+/).filter(Boolean);
})();

/**
 * The platform exactly as `npm start` runs it (dist/scripts/start.js, with `npm start`'s Node flags): on PostgreSQL a primary and
 * `workers` node:cluster workers sharing every port; without `databaseUrl`, on embedded PGlite in one
 * process. Ready when its contacts REST service answers `/readyz`; `pids()` lists the primary and its
 * workers, for their CPU.
 */
export async function startNpmStart(
  databaseUrl: string | undefined,
  workers: number,
  settings: Record<string, string> = {},
): Promise<Child & { pids(): number[] }> {
  const ports = await platformPorts();
  const ownDataDir = settings.DATA_DIR === undefined; // else the caller's: two instances share the issuer's keys
  const dataDir = settings.DATA_DIR ?? mkdtempSync(path.join(os.tmpdir(), 'bench-npm-start-'));
  const child = spawn(
    process.execPath,
    [...NPM_START_NODE_FLAGS, path.join(PROJECT_ROOT, 'dist', 'scripts', 'start.js')],
    {
      cwd: PROJECT_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'production',
        ...BENCH_PRODUCTION_DECISIONS,
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
        WEB_CONCURRENCY: String(workers),
        ...benchPassedSettings(),
        ...ports,
        ...settings,
      },
      stdio: ['ignore', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore', 'inherit'],
    },
  );
  const url = (name: string) => `http://127.0.0.1:${ports[name]}`;
  const stop = async () => {
    await stopProcess(child);
    if (ownDataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  for (let attempt = 0; attempt < 1200; attempt++) {
    if (child.exitCode !== null) throw new Error('npm start exited before it was ready');
    if (
      await fetch(`${url('CONTACTS_REST_PORT')}/readyz`).then(
        (response) => response.ok,
        () => false,
      )
    ) {
      return {
        process: child,
        urls: {
          rest: url('CONTACTS_REST_PORT'),
          gateway: `${url('GATEWAY_PORT')}/graphql`,
          socialSubgraph: `${url('SOCIAL_SUBGRAPH_PORT')}/graphql`,
          surveysSubgraph: `${url('SURVEYS_SUBGRAPH_PORT')}/graphql`,
          contactsSubgraph: `${url('CONTACTS_SUBGRAPH_PORT')}/graphql`,
        },
        stop,
        pids: () => [child.pid!, ...childrenOf(child.pid!)],
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error('npm start not ready after 120 s');
}

/** The pids of a process's children, from /proc (Linux). */
export function childrenOf(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      if (ppid === parent) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

export function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

/** Resident set size of a process in MB, from /proc (Linux). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

/** CPU seconds (user + system) a process has used, from /proc (Linux; 100 ticks a second); 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** The value below which `share` of the sorted `values` lie. */
export const percentile = (sorted: number[], share: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))];

export const fmt = (value: number, digits = 0) => value.toFixed(digits);

/** One autocannon run; any non-2xx answer or error fails the bench. */
export async function runLoad(options: autocannon.Options): Promise<autocannon.Result> {
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(options, (error, finished) => (error ? reject(error as Error) : resolve(finished)));
  });
  if (result.non2xx || result.errors)
    throw new Error(`${options.url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

/** One request's wall time in ms over a keep-alive agent; rejects on anything but a 2xx. */
function timedRequest(
  agent: http.Agent,
  target: URL,
  request: { path: string; method?: string; body?: string },
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const started = performance.now();
    const headers = request.body
      ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(request.body) }
      : undefined;
    const outgoing = http.request(
      { host: target.hostname, port: target.port, path: request.path, method: request.method ?? 'GET', headers, agent },
      (response) => {
        response.resume();
        response.on('end', () =>
          response.statusCode! >= 200 && response.statusCode! < 300
            ? resolve(performance.now() - started)
            : reject(new Error(`status ${response.statusCode}`)),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

/** `count` requests one after the other on one kept-alive connection: what one idle client sees. Answers each latency in ms. */
export async function sequentialLoad(
  base: string,
  count: number,
  next: () => { path: string; method?: string; body?: string },
): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i++) times.push(await timedRequest(agent, new URL(base), next()));
  } finally {
    agent.destroy();
  }
  return times;
}

/**
 * An open-loop load: one request every 1/rate seconds on its own schedule, whether or not earlier
 * ones have answered (autocannon's rate limit sends each second's budget in a burst, which
 * measures a burst of concurrent requests rather than a steady rate). Answers each latency in ms.
 */
export async function steadyLoad(
  base: string,
  rate: number,
  seconds: number,
  next: () => { path: string; method?: string; body?: string },
): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const target = new URL(base);
  const pending: Promise<number>[] = [];
  const start = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(timedRequest(agent, target, next()));
  }
  const times = await Promise.all(pending);
  agent.destroy();
  return times.sort((a, b) => a - b);
}

/**
 * The same open-loop load as `steadyLoad`, for as long as `running()` holds (the length of some other
 * work, an import). Answers each latency in ms, sorted; a request that fails fails the load.
 */
export async function steadyLoadWhile(
  base: string,
  rate: number,
  running: () => boolean,
  next: () => { path: string; method?: string; body?: string },
): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const target = new URL(base);
  const pending: Promise<number>[] = [];
  const start = performance.now();
  for (let i = 0; running(); i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(timedRequest(agent, target, next()));
  }
  const times = await Promise.all(pending);
  agent.destroy();
  return times.sort((a, b) => a - b);
}

/**
 * CPU seconds used so far by the PostgreSQL backends serving `database` (read from /proc: the bench
 * runs on the database's machine). Backends that close between two readings take their share along.
 */
export async function postgresCpu(admin: pg.Client, database: string): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
    [database],
  );
  return new Map(rows.map(({ pid }) => [pid, cpuSeconds(pid)]));
}

/** CPU seconds the backends of `database` used since `before`; backends opened meanwhile count whole, closed ones are lost. */
export async function postgresCpuSince(
  admin: pg.Client,
  database: string,
  before: Map<number, number>,
): Promise<number> {
  let total = 0;
  for (const [pid, seconds] of await postgresCpu(admin, database))
    total += Math.max(0, seconds - (before.get(pid) ?? 0));
  return total;
}
