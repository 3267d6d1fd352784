/**
 * `npm run bench:footprint`: what the platform costs before it serves anything. Prints the size of
 * the production install (a fresh `npm ci --omit=dev --ignore-scripts` of package.json and the lock,
 * measured with du before and after the image's own pruning, scripts/prune-install.mjs), the time
 * `npm start` takes to open every port on a first start (fresh data, nothing compiled) and on a warm
 * one (data and dist in place), and the resident memory of its
 * process tree 30 s after it is ready; on embedded PGlite, and on PostgreSQL when DATABASE_URL or
 * TEST_DATABASE_URL names a server. Each figure beside its target.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { PORT_VARIABLES, platformPorts } from '#test/support/ports.js';
import { fmt, rssMb, stopProcess } from './support.js';

const TARGETS = { installMb: 200, embeddedMb: 500, postgresqlMb: 250, firstStartS: 20, warmStartS: 3 };
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
/** What a project copy leaves out: what the install, the build and a start make. */
const NOT_COPIED = new Set(['node_modules', 'dist', '.data', '.git', '.tools', 'coverage']);

const verdict = (value: number, target: number) => (value <= target ? 'met' : 'MISSED');

/** npm as the running `npm run` found it, else the one on PATH. */
function npmCommand(): [string, string[]] {
  const cli = process.env.npm_execpath;
  return cli && /npm-cli\.js$/.test(cli) ? [process.execPath, [cli]] : ['npm', []];
}

/** Disk use of a folder in MB, as `du -sk` counts it (whole blocks, what the image and the volume hold). */
function duMb(folder: string, apparent = false): number {
  const result = spawnSync('du', ['-sk', ...(apparent ? ['--apparent-size'] : []), folder], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`du ${folder}: ${result.stderr}`);
  return Number(result.stdout.split('\t')[0]) / 1024;
}

/** (a) A fresh production install of the project's package.json and lock into a temporary folder. */
function measureInstall(): void {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'bench-footprint-install-'));
  try {
    for (const file of ['package.json', 'package-lock.json'])
      copyFileSync(path.join(PROJECT_ROOT, file), path.join(folder, file));
    const [command, prefix] = npmCommand();
    const started = performance.now();
    const result = spawnSync(
      command,
      [...prefix, 'ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
      { cwd: folder, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } },
    );
    if (result.status !== 0) throw new Error(`npm ci failed: ${result.stderr}`);
    const modules = path.join(folder, 'node_modules');
    const installed = duMb(modules);
    const seconds = (performance.now() - started) / 1000;
    // What the image keeps: the same install less what nothing runs, by the Dockerfile's own last step.
    const pruned = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'scripts/prune-install.mjs'), folder], {
      encoding: 'utf8',
    });
    if (pruned.status !== 0) throw new Error(`prune-install failed: ${pruned.stderr}`);
    const total = duMb(modules);
    console.log(
      `production install (npm ci --omit=dev, ${fmt(seconds)} s): ${fmt(installed)} MB on disk, then ${pruned.stdout.trim()}:\n` +
        `  as the image keeps it: ${fmt(total)} MB on disk (${fmt(duMb(modules, true))} MB of file contents), ` +
        `target ${TARGETS.installMb} MB: ${verdict(total, TARGETS.installMb)}`,
    );
    const packages = readdirSync(modules)
      .filter((name) => !name.startsWith('.'))
      .flatMap((name) =>
        name.startsWith('@') ? readdirSync(path.join(modules, name)).map((inner) => `${name}/${inner}`) : [name],
      )
      .map((name) => ({ name, mb: duMb(path.join(modules, name)) }))
      .sort((a, b) => b.mb - a.mb)
      .slice(0, 10);
    console.log(`  largest: ${packages.map(({ name, mb }) => `${name} ${fmt(mb, 1)}`).join(', ')}`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** A process and all its descendants, from /proc (Linux). */
function processTree(root: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const tree = [root];
  for (let index = 0; index < tree.length; index++) tree.push(...(parents.get(tree[index]) ?? []));
  return tree;
}

const treeRssMb = (root: number) =>
  processTree(root)
    .map(rssMb)
    .filter((mb) => !Number.isNaN(mb))
    .reduce((sum, mb) => sum + mb, 0);

/**
 * A copy of the project's sources with nothing compiled (node_modules linked, not copied), so a
 * first start builds as it does after a fresh clone and `npm install`, without touching this
 * checkout's dist/.
 */
function projectCopy(): string {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'bench-footprint-project-'));
  for (const entry of readdirSync(PROJECT_ROOT)) {
    if (NOT_COPIED.has(entry)) continue;
    cpSync(path.join(PROJECT_ROOT, entry), path.join(folder, entry), { recursive: true });
  }
  symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(folder, 'node_modules'), 'dir');
  return folder;
}

interface Started {
  child: ChildProcess;
  seconds: number;
}

/**
 * `npm start` (scripts/launch.mjs: builds when the sources are newer than dist, then starts), timed
 * from spawn to every port's `/readyz` answering 200. package.json's own start script, Node flags
 * and all, run by the shell as npm runs it, without npm's process (its `exec` leaves one process).
 */
async function npmStart(project: string, env: Record<string, string>): Promise<Started> {
  const { scripts } = JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const started = performance.now();
  const child = spawn('sh', ['-c', scripts.start], {
    cwd: project,
    // This Node first on the PATH: the script's `node` is the one running the bench.
    env: { ...env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${env.PATH}` },
    stdio: ['ignore', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore', 'inherit'],
  });
  const ports = PORT_VARIABLES.map((name) => env[name]);
  const ready = async (port: string) =>
    fetch(`http://127.0.0.1:${port}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
  while (performance.now() - started < 600_000) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode} before it was ready`);
    if ((await Promise.all(ports.map(ready))).every(Boolean))
      return { child, seconds: (performance.now() - started) / 1000 };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stopProcess(child);
  throw new Error('npm start not ready after 600 s');
}

/** (b) and (c) on one database: a first start, a warm restart, and the warm one's memory once idle. */
async function measureStarts(
  label: string,
  memoryTarget: number | undefined,
  databaseUrl?: string,
  settings: Record<string, string> = {},
): Promise<void> {
  const project = projectCopy();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-footprint-data-'));
  try {
    const ports = await platformPorts();
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? os.tmpdir(),
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      DATA_DIR: dataDir,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      ...settings,
      ...ports,
    };
    const first = await npmStart(project, env);
    await stopProcess(first.child);
    const warm = await npmStart(project, env);
    try {
      await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
      const tree = processTree(warm.child.pid!);
      const memory = treeRssMb(warm.child.pid!);
      console.log(`${label}:`);
      console.log(
        `  first start (nothing compiled, fresh data): ${fmt(first.seconds, 1)} s, ` +
          `target ${TARGETS.firstStartS} s: ${verdict(first.seconds, TARGETS.firstStartS)}`,
      );
      console.log(
        `  warm start (dist and data in place):        ${fmt(warm.seconds, 1)} s, target ${TARGETS.warmStartS} s: ${verdict(warm.seconds, TARGETS.warmStartS)}`,
      );
      console.log(
        `  resident memory ${IDLE_SECONDS} s after ready (${tree.length} ` +
          `process${tree.length > 1 ? 'es' : ''}): ${fmt(memory)} ` +
          `MB${memoryTarget === undefined ? '' : `, target ${memoryTarget} MB: ${verdict(memory, memoryTarget)}`}`,
      );
    } finally {
      await stopProcess(warm.child);
    }
  } finally {
    rmSync(project, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A database of its own on the named server, so the start migrates from nothing; dropped after. */
async function withFreshDatabase(server: string, work: (url: string) => Promise<void>): Promise<void> {
  const name = `bench_footprint_${process.pid}_${Date.now() % 100000}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    await work(url.toString());
  } finally {
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

async function main(): Promise<void> {
  console.log(
    `footprint bench on ${os.cpus().length} cores, ${os.loadavg()[0].toFixed(2)} load (times and memory need a quiet machine)`,
  );
  measureInstall();
  await measureStarts('embedded PGlite (no DATABASE_URL)', TARGETS.embeddedMb);
  const server = process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (server) {
    // The memory target is one process's (WEB_CONCURRENCY=1); npm start's default, a worker per CPU, is printed too.
    await withFreshDatabase(server, (url) =>
      measureStarts(`PostgreSQL (${new URL(server).host}), one process`, TARGETS.postgresqlMb, url, {
        WEB_CONCURRENCY: '1',
      }),
    );
    await withFreshDatabase(server, (url) =>
      measureStarts(`PostgreSQL (${new URL(server).host}), a worker per CPU`, undefined, url),
    );
  } else console.log('PostgreSQL: skipped (set DATABASE_URL or TEST_DATABASE_URL to a server)');
}

exitWithHelpIfAsked(
  `
usage: npm run bench:footprint

The production install's size (a fresh npm ci --omit=dev --ignore-scripts into a temporary folder,
measured with du, then as the image keeps it, pruned by scripts/prune-install.mjs; target 200 MB); npm start's ` +
    `first start (fresh DATA_DIR, nothing compiled; target
20 s) and warm start (target 3 s), each from spawn to every port's /readyz answering; and its process
tree's resident memory ${IDLE_SECONDS} s after ready (target 500 MB embedded, 250 MB PostgreSQL in one
process). Embedded PGlite always; PostgreSQL too when DATABASE_URL or TEST_DATABASE_URL names a server
(a database of its own is made and dropped there), in one process and with a worker per CPU. npm start
(package.json's start script, its Node flags included) runs from a temporary copy of the sources, so
this checkout's dist/ and .data are untouched. BENCH_IDLE_SECONDS changes the 30 s; BENCH_VERBOSE shows
the platform's output.
`,
);

await main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
