/**
 * `npm run bench:compare -- <revision>`: this tree against another revision of the platform, side by
 * side, to decide whether a change pays. This machine's speed moves by half within minutes, so
 * figures of two runs, even an hour apart, do not compare; variants running at the same time do.
 *
 * The revision is checked out in a temporary git worktree (sharing this tree's node_modules) and built
 * there. Both platforms (each in one process, as `npm start` runs one worker) then serve the same
 * database on PostgreSQL (10,000 contacts), and are loaded in turn: a contact by id over REST and
 * the gateway's `contact(id)` sent by `documentId`, 16 connections, a few seconds each, the order
 * alternating each round. Printed: the medians of requests per second and Node CPU per request, and
 * this tree's requests per second as a ratio of the other's.
 *
 * Then the figure to decide by: both platforms loaded at the same time, each at the same fixed rate
 * (BENCH_RATE requests per second, well under what one core serves), and the Node CPU each spent per
 * request in that same window. Whatever the machine does meanwhile, it does to both: two copies of
 * one build, started from one folder, came within 4 % of each other in every round, where throughput
 * in turn differed by up to half. Run against its own HEAD (built apart), a tree got 0.82 to 1.01 here,
 * single rounds 0.76 to 1.17: a change under a fifth still needs several runs, started both ways.
 */
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type autocannon from 'autocannon';
import pg from 'pg';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { writeContactManifest } from './manifest.js';
import {
  NPM_START_NODE_FLAGS,
  SERVE,
  benchDatabase,
  cpuSeconds,
  fmt,
  median,
  runLoad,
  seedContacts,
  startChild,
  type Child,
} from './support.js';

const SEED_ROWS = 10_000;
const CONNECTIONS = 16;
const RUN_SECONDS = Number(process.env.BENCH_RUN_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
/** Requests per second each platform is sent at once in the CPU comparison, on 4 connections each. */
const RATE = Number(process.env.BENCH_RATE ?? 300);
const RATE_SECONDS = 8;

/** `revision` checked out and built in a temporary worktree: answers its `serve.js` and how to remove it. */
function buildRevision(revision: string): { serve: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-compare-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: PROJECT_ROOT, stdio: 'ignore' });
  git('worktree', 'add', '--detach', dir, revision);
  const remove = () => git('worktree', 'remove', '--force', dir);
  try {
    symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    execFileSync(process.execPath, ['scripts/launch.mjs', '--build'], { cwd: dir, stdio: 'inherit' });
  } catch (error) {
    remove();
    throw error;
  }
  return { serve: path.join(dir, 'dist', 'bench', 'serve.js'), remove };
}

interface Side {
  name: string;
  platform: Child;
  /** By target name: requests per second and Node CPU ms per request of each run. */
  runs: Map<string, { rps: number; cpu: number }[]>;
}

async function main(revision: string): Promise<void> {
  const other = buildRevision(revision);
  const database = await benchDatabase('bench_compare');
  const manifestDir = mkdtempSync(path.join(os.tmpdir(), 'bench-compare-manifest-'));
  const sides: Side[] = [];
  try {
    const manifest = writeContactManifest(manifestDir);
    const env = { BENCH_PLATFORM_DATABASE_URL: database.url, TRUSTED_DOCUMENTS: manifest.file };
    // One after the other: both would run the same migrations at once. Which starts first may matter (it
    // was seen to, by a fifth): BENCH_START_FIRST=revision swaps the order, and a change is judged both ways.
    const order: Array<[string, string]> = [
      ['this tree', SERVE],
      [revision, other.serve],
    ];
    if (process.env.BENCH_START_FIRST === 'revision') order.reverse();
    for (const [name, serve] of order) {
      sides.push({ name, platform: await startChild(serve, ['platform'], env, NPM_START_NODE_FLAGS), runs: new Map() });
    }
    // This tree first from here on, whichever started first: the ratio printed is this tree's over the revision's.
    if (sides[0].name !== 'this tree') sides.reverse();
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await seedContacts(admin, SEED_ROWS);
    const ids = (await admin.query<{ id: string }>('select id from contacts.contact order by random() limit 1000'))
      .rows;
    await admin.end();
    const randomId = () => ids[Math.floor(Math.random() * ids.length)].id;

    const targets: Record<string, (urls: Record<string, string>) => autocannon.Options> = {
      'REST GET /api/contacts/{id}': (urls) => ({
        url: urls.rest,
        requests: [{ setupRequest: (request) => ({ ...request, path: `/api/contacts/${randomId()}` }) }],
      }),
      'gateway contact(id) by documentId': (urls) => ({
        url: urls.gateway,
        requests: [
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            setupRequest: (request) => ({
              ...request,
              body: JSON.stringify({ documentId: manifest.documentId, variables: { id: randomId() } }),
            }),
          },
        ],
      }),
    };
    const load = async (side: Side, target: string, seconds: number) => {
      const pid = side.platform.process.pid!;
      const before = cpuSeconds(pid);
      const result = await runLoad({
        ...targets[target](side.platform.urls),
        connections: CONNECTIONS,
        duration: seconds,
      });
      return { rps: result.requests.average, cpu: ((cpuSeconds(pid) - before) / result.requests.total) * 1000 };
    };
    // Warm-up: JIT, pools, plans.
    for (const side of sides) for (const target of Object.keys(targets)) await load(side, target, 2);
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of Object.keys(targets)) {
        for (const side of round % 2 ? [...sides].reverse() : sides) {
          const runs = side.runs.get(target) ?? [];
          runs.push(await load(side, target, RUN_SECONDS));
          side.runs.set(target, runs);
        }
      }
    }

    console.log(`\n${ROUNDS} rounds of ${RUN_SECONDS} s each, ${CONNECTIONS} connections, ${SEED_ROWS} contacts:`);
    for (const target of Object.keys(targets)) {
      const rpsOf = (side: Side) => median(side.runs.get(target)!.map((run) => run.rps));
      console.log(`  ${target}`);
      for (const side of sides) {
        const cpu = median(side.runs.get(target)!.map((run) => run.cpu));
        const each = side.runs
          .get(target)!
          .map((run) => fmt(run.rps))
          .join(' ');
        console.log(
          `    ${side.name.padEnd(24)} ${fmt(rpsOf(side)).padStart(6)} req/s   node ${fmt(cpu, 3)} ms per request   (runs: ${each})`,
        );
      }
      console.log(`    this tree / ${revision}: ${fmt(rpsOf(sides[0]) / rpsOf(sides[1]), 2)}x`);
    }

    // Both at once, at a fixed rate: Node CPU per request of each in the same window, and their ratio per round.
    // Whose load starts first alternates by round, as the order of the loads in turn above does.
    const atOnce = async (target: string, round: number) => {
      const pids = sides.map((side) => side.platform.process.pid!);
      const before = pids.map(cpuSeconds);
      const loads: Array<Promise<autocannon.Result>> = [];
      for (const index of round % 2 ? [1, 0] : [0, 1])
        loads[index] = runLoad({
          ...targets[target](sides[index].platform.urls),
          connections: 4,
          overallRate: RATE,
          duration: RATE_SECONDS,
        });
      const results = await Promise.all(loads);
      return results.map((result, index) => ((cpuSeconds(pids[index]) - before[index]) / result.requests.total) * 1000);
    };
    console.log(`\nboth at once, ${RATE} req/s each, ${ROUNDS} rounds of ${RATE_SECONDS} s: Node CPU ms per request`);
    for (const target of Object.keys(targets)) {
      await atOnce(target, 0);
      const rounds: number[][] = [];
      for (let round = 0; round < ROUNDS; round++) rounds.push(await atOnce(target, round));
      const ratios = rounds.map(([ours, theirs]) => ours / theirs);
      console.log(`  ${target}`);
      for (const [index, side] of sides.entries())
        console.log(
          `    ${side.name.padEnd(24)} ${fmt(median(rounds.map((round) => round[index])), 3)} ms per request`,
        );
      console.log(
        `    this tree / ${revision}: ${fmt(median(ratios), 3)}x the CPU (rounds: ${ratios.map((ratio) => fmt(ratio, 2)).join(' ')})`,
      );
    }
  } finally {
    await Promise.all(sides.map((side) => side.platform.stop()));
    rmSync(manifestDir, { recursive: true, force: true });
    await database.drop();
    other.remove();
  }
}

exitWithHelpIfAsked(`
usage: npm run bench:compare -- <revision>

This tree's platform against <revision>'s (a commit, tag or branch, checked out and built in a
temporary git worktree), both in one process each on the same PostgreSQL database (BENCH_DATABASE_URL,
default postgres://postgres@127.0.0.1:5432/postgres; a database of its own is made and dropped, 10,000
contacts): REST by id and the gateway's contact(id) by documentId, loaded in turn, the order
alternating; medians of requests per second and Node CPU per request, and their ratio. Then both loaded
at once at BENCH_RATE (300) requests per second each: the Node CPU per request of each in the same
window, and this tree's over the revision's per round (the figure to decide by). BENCH_RUN_SECONDS
(3) and BENCH_ROUNDS (8) tune it; BENCH_START_FIRST=revision starts the revision's platform first (this
tree's starts first otherwise).
`);

const revision = process.argv[2];
if (!revision) {
  console.error('usage: npm run bench:compare -- <revision>   (--help says more)');
  process.exit(2);
}
await main(revision).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
