/**
 * `npm run bench:soak`: is the platform's memory flat under a long mixed load?
 *
 * Starts the platform as `npm start` does (embedded PGlite by default; on PostgreSQL in one process with
 * BENCH_SOAK_DATABASE=postgresql), fills the contacts with a CSV import, then sends a steady mix for
 * BENCH_SOAK_SECONDS (default 600): through the contacts REST service reads by id, searches, creates and
 * updates, notes, and through the gateway a page of a contact search. The resident memory of the
 * process tree is read from /proc every BENCH_SOAK_SAMPLE_SECONDS; the verdict compares the last reading
 * with the one after the first minute (target: at most 10 % growth), as issue 28 asks.
 */
import 'reflect-metadata';
import os from 'node:os';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { benchDatabase, fmt, percentile, randomWord, rssMb, startNpmStart, steadyLoad } from './support.js';

const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
const SAMPLE_SECONDS = Number(process.env.BENCH_SOAK_SAMPLE_SECONDS ?? 30);
/** Requests per second, REST and GraphQL together. */
const RATE = Number(process.env.BENCH_SOAK_RATE ?? 100);
const SEED_ROWS = 5000;
const GROWTH_TARGET = 0.1;
const ON_POSTGRESQL = process.env.BENCH_SOAK_DATABASE === 'postgresql';

const GRAPHQL_QUERY = `query Soak($search: String) {
  contactPage(search: $search, limit: 10) { items { id firstName lastName email company tags } total }
}`;

async function seed(rest: string): Promise<string[]> {
  const lines = ['firstName,lastName,email,company,tags'];
  for (let n = 1; n <= SEED_ROWS; n++)
    lines.push(`${randomWord()},Soak${n},soak${n}@soak.example,${randomWord()} Ltd,${randomWord()};soak`);
  const form = new FormData();
  form.append('file', new Blob([lines.join('\n')], { type: 'text/csv' }), 'soak.csv');
  const imported = await fetch(`${rest}/api/contacts/import`, { method: 'POST', body: form });
  if (!imported.ok) throw new Error(`seed import answered ${imported.status}: ${await imported.text()}`);
  const ids: string[] = [];
  for (let page = 1; ids.length < 1000; page++) {
    const listed = (await (await fetch(`${rest}/api/contacts?limit=100&page=${page}`)).json()) as {
      data: { id: string }[];
    };
    if (!listed.data.length) break;
    ids.push(...listed.data.map((contact) => contact.id));
  }
  return ids;
}

async function main(): Promise<void> {
  const database = ON_POSTGRESQL ? await benchDatabase('bench_soak') : undefined;
  const platform = await startNpmStart(database?.url, 1);
  try {
    console.log(
      `soak on ${ON_POSTGRESQL ? 'PostgreSQL, one process' : 'embedded PGlite'}: ${RATE} requests/s for ${SECONDS} s, ` +
        `${os.cpus().length} cores, load ${fmt(os.loadavg()[0], 2)}`,
    );
    const ids = await seed(platform.urls.rest);
    const randomId = () => ids[Math.floor(Math.random() * ids.length)];
    let written = 0;
    const restMix = () => {
      const draw = Math.random();
      if (draw < 0.5) return { path: `/api/contacts/${randomId()}` };
      if (draw < 0.7) return { path: `/api/contacts?search=${randomWord()}` };
      if (draw < 0.8)
        return {
          path: `/api/contacts/${randomId()}/notes`,
          method: 'POST',
          body: JSON.stringify({ body: `Soak note ${++written}` }),
        };
      if (draw < 0.9)
        return {
          path: '/api/contacts',
          method: 'POST',
          body: JSON.stringify({ firstName: 'Soak', email: `soak-new${++written}@soak.example` }),
        };
      return {
        path: `/api/contacts/${randomId()}`,
        method: 'PUT',
        body: JSON.stringify({ company: `${randomWord()} ${++written}` }),
      };
    };
    const gateway = new URL(platform.urls.gateway);
    const graphqlMix = () => ({
      path: gateway.pathname,
      method: 'POST',
      body: JSON.stringify({ query: GRAPHQL_QUERY, variables: { search: randomWord() } }),
    });

    const rss = () => platform.pids().reduce((sum, pid) => sum + rssMb(pid), 0);
    const readings: { second: number; mb: number }[] = [{ second: 0, mb: rss() }];
    const latencies: number[] = [];
    console.log(`  ${'second'.padStart(6)} ${'RSS MB'.padStart(7)}`);
    console.log(`  ${'0'.padStart(6)} ${fmt(readings[0].mb).padStart(7)}   (after the seed import)`);
    for (let second = SAMPLE_SECONDS; second <= SECONDS; second += SAMPLE_SECONDS) {
      const [rest, graph] = await Promise.all([
        steadyLoad(platform.urls.rest, RATE * 0.8, SAMPLE_SECONDS, restMix),
        steadyLoad(gateway.origin, RATE * 0.2, SAMPLE_SECONDS, graphqlMix),
      ]);
      latencies.push(...rest, ...graph);
      const mb = rss();
      readings.push({ second, mb });
      console.log(`  ${String(second).padStart(6)} ${fmt(mb).padStart(7)}`);
    }
    const afterMinute = readings.find((reading) => reading.second >= 60) ?? readings[1];
    const last = readings.at(-1)!;
    const growth = (last.mb - afterMinute.mb) / afterMinute.mb;
    latencies.sort((a, b) => a - b);
    console.log(
      `\nRSS after the first minute ${fmt(afterMinute.mb)} MB, at the end ${fmt(last.mb)} MB, highest ${fmt(
        Math.max(...readings.map((reading) => reading.mb)),
      )} MB: growth ${fmt(growth * 100, 1)} % (target at most ${GROWTH_TARGET * 100} %: ${
        growth <= GROWTH_TARGET ? 'met' : 'MISSED'
      })`,
    );
    console.log(
      `latency of the ${latencies.length} requests: p50 ${fmt(percentile(latencies, 0.5), 1)} ms, p99 ${fmt(percentile(latencies, 0.99), 1)} ms`,
    );
  } finally {
    await platform.stop();
    await database?.drop();
  }
}

exitWithHelpIfAsked(`
usage: npm run bench:soak

The platform as npm start runs it (embedded PGlite; BENCH_SOAK_DATABASE=postgresql for one process on
BENCH_DATABASE_URL) under a steady mix of REST reads, searches, writes and gateway queries: resident memory
every BENCH_SOAK_SAMPLE_SECONDS (30) for BENCH_SOAK_SECONDS (600) at BENCH_SOAK_RATE requests/s (100), and
its growth after the first minute against the 10 % target.
`);

await main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
