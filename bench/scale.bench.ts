/**
 * `npm run bench:scale`: does search through REST stay as fast with a million contacts as with ten
 * thousand? Builds both data sets with SQL (a database each), starts the platform on each in turn,
 * and sends `GET /api/contacts?search=<word>` at a steady 50 requests per second (open loop: one
 * request every 20 ms whether or not the last has answered); prints p50/p95/p99 and the ratio of
 * the p95s (target: 1,000,000 within 2x of 10,000).
 */
import 'reflect-metadata';
import os from 'node:os';
import pg from 'pg';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { SERVE, benchDatabase, fmt, percentile, randomWord, seedContacts, startChild, steadyLoad } from './support.js';

const SIZES = (process.env.BENCH_SIZES ?? '10000,1000000').split(',').map(Number);
const RATE = 50;
const SECONDS = Number(process.env.BENCH_STEADY_SECONDS ?? 20);

async function measure(rows: number): Promise<number[]> {
  const database = await benchDatabase(`bench_scale_${rows}`);
  try {
    const platform = await startChild(SERVE, ['platform'], { BENCH_PLATFORM_DATABASE_URL: database.url });
    try {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const started = performance.now();
      await seedContacts(client, rows);
      await client.end();
      console.log(`${rows} contacts seeded in ${fmt((performance.now() - started) / 1000, 1)} s`);
      const search = () => ({ path: `/api/contacts?search=${randomWord()}` });
      await steadyLoad(platform.urls.rest, RATE, 3, search); // warm-up: JIT, pools, plans
      return await steadyLoad(platform.urls.rest, RATE, SECONDS, search);
    } finally {
      await platform.stop();
    }
  } finally {
    await database.drop();
  }
}

async function main(): Promise<void> {
  console.log(
    `scale bench on ${os.cpus().length} cores, ${os.loadavg()[0].toFixed(2)} load: REST search at a steady ${RATE} req/s for ${SECONDS} s`,
  );
  const p95s: number[] = [];
  for (const rows of SIZES) {
    const times = await measure(rows);
    p95s.push(percentile(times, 0.95));
    console.log(
      `  ${String(rows).padStart(9)} contacts: ${times.length} requests, p50 ${fmt(percentile(times, 0.5), 1)} ` +
        `ms, p95 ${fmt(percentile(times, 0.95), 1)} ms, p99 ${fmt(percentile(times, 0.99), 1)} ms`,
    );
  }
  if (p95s.length > 1) {
    const ratio = p95s.at(-1)! / p95s[0];
    console.log(
      `p95 at ${SIZES.at(-1)} / p95 at ${SIZES[0]}: ${fmt(ratio, 2)} (target 2 or less: ${ratio <= 2 ? 'met' : 'MISSED'})`,
    );
  }
}

exitWithHelpIfAsked(`
usage: npm run bench:scale

REST search p50/p95/p99 at a steady 50 req/s with 10,000 and with 1,000,000 contacts on PostgreSQL
(BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres; a database of its own per
size, seeded by SQL and dropped). BENCH_SIZES (e.g. 10000,100000) and BENCH_STEADY_SECONDS tune it.
`);

await main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
