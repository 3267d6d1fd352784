/**
 * `npm run bench:bulk`: a million-row import and export of contacts on PostgreSQL (issue 27), each
 * against a hand-written floor on the same table and indexes, in one run:
 *
 * - import of BENCH_ROWS rows (default 1,048,576; firstName, lastName, email, phone, company, tags;
 *   1 % of them repeat an earlier row's e-mail, a few are invalid) through REST
 *   `POST /api/contacts/import` with `Prefer: respond-async`, polled at `GET /api/contacts/import/{id}`
 *   until it succeeded, against the floor: the same multipart upload COPYed into a staging table
 *   (pg-copy-streams), then one `INSERT ... SELECT ... ON CONFLICT (lower(email)) ... DO UPDATE`;
 * - while the platform imports, `GET /api/contacts/{id}` at a steady 100 requests per second: p99;
 * - export of the book through REST `GET /api/contacts/export` against `COPY (SELECT the same
 *   columns) TO STDOUT` served by hand;
 * - peak RSS growth of the platform process during either.
 *
 * The platform (bench/serve.ts's platform, with the import limits raised to the design's 512 MiB and
 * 1,048,576 rows) and the floor run in child processes; RSS is read from /proc. The platform imports
 * into one database and the floor into a copy of it made before either ran (CREATE DATABASE ...
 * TEMPLATE), so both start from the same book; both exports read the platform's database.
 * BENCH_LEGACY_IMPORT=1 also times the legacy request that waits for the import, on a third copy.
 */
import 'reflect-metadata';
import { createWriteStream, mkdtempSync, openAsBlob, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import busboy from 'busboy';
import express from 'express';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { createLogger } from '#lib/observability/logger.js';
import { startPlatform } from '#scripts/platform.js';
import {
  benchPlatformConfig,
  benchDatabase,
  fmt,
  median,
  NPM_START_NODE_FLAGS,
  percentile,
  rssMb,
  seedContacts,
  startChild,
  steadyLoadWhile,
  type Child,
} from './support.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_048_576);
/** Contacts in the book before the import: what the steady reads ask for. */
const BASE_ROWS = 10_000;
const STEADY_RATE = 100;
const POLL_MS = 250;
/** Runs of each export, interleaved; the median is quoted. */
const EXPORT_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** The design's import limits (DESIGN.md, "Bulk import and export"), whatever the build's defaults. */
const IMPORT_LIMITS = { IMPORT_MAX_BYTES: String(512 * 1024 * 1024), IMPORT_MAX_ROWS: String(1_048_576) };
/** Node flags of the platform process: `npm start`'s, unless BENCH_NODE_FLAGS says otherwise. */
const PLATFORM_NODE_FLAGS =
  process.env.BENCH_NODE_FLAGS === undefined
    ? NPM_START_NODE_FLAGS
    : process.env.BENCH_NODE_FLAGS.split(' ').filter(Boolean);

const here = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------------------------------------
// Child processes

/** The whole platform, as `npm start` runs one worker, with the design's import limits. */
async function servePlatform(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-bulk-platform-'));
  const config = benchPlatformConfig(dataDir, process.env.BENCH_PLATFORM_DATABASE_URL, {
    ...IMPORT_LIMITS,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
  });
  const platform = await startPlatform(config, createLogger(config));
  process.send?.({ urls: { rest: platform.rest.contacts.url.replace('//localhost:', '//127.0.0.1:') } });
  process.on('SIGTERM', () => {
    void platform.close().finally(() => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

/** The file's columns as the floor's staging table holds them (COPY reads the header and drops it). */
const STAGING = `create temp table staging (
  n bigint generated always as identity, first_name text, last_name text, email text, phone text, company text, tags text)`;

/** A row the floor imports: a first name or an e-mail, and an e-mail (if any) that looks like an address. */
const FLOOR_VALID = `(first_name is not null or email is not null) and (email is null or email ~ '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$')`;

/**
 * The import as one would write it by hand for this one file shape: COPY into a staging table, then
 * one statement. Rows with neither first name nor e-mail, or an e-mail that is no address, are
 * skipped; of rows sharing an e-mail the last wins; an e-mail already live updates that contact.
 */
const FLOOR_UPSERT = `
  with valid as (
    select * from staging where ${FLOOR_VALID}
  ), last_of_email as (
    select distinct on (coalesce(lower(email), n::text)) * from valid order by coalesce(lower(email), n::text), n desc
  )
  insert into contacts.contact (id, first_name, last_name, email, phone, company, tags, created_at, updated_at)
  select gen_random_uuid(), first_name, last_name, email, phone, company,
    coalesce(string_to_array(tags, ';'), '{}'), now(), now()
  from last_of_email
  on conflict (lower(email)) where not deleted and email is not null do update set
    first_name = excluded.first_name, last_name = excluded.last_name, phone = excluded.phone,
    company = excluded.company, tags = excluded.tags, updated_at = now()
  returning (xmax = 0) as created`;

/** What `COPY (SELECT same columns) TO STDOUT` of the export is: the live contacts, newest first, unformatted. */
const FLOOR_EXPORT = `copy (
  select id, first_name, last_name, email, phone, company, tags, created_at, updated_at
  from contacts.contact where not deleted order by created_at desc, id desc
) to stdout with (format csv, header)`;

/** The floor: `POST /import` (multipart, field file) into BENCH_FLOOR_IMPORT_URL, `GET /export` from BENCH_FLOOR_EXPORT_URL. */
async function serveFloor(): Promise<void> {
  const importPool = new pg.Pool({ connectionString: process.env.BENCH_FLOOR_IMPORT_URL, max: 2 });
  const exportPool = new pg.Pool({ connectionString: process.env.BENCH_FLOOR_EXPORT_URL, max: 2 });
  const app = express();
  app.post('/import', async (req, res) => {
    const client = await importPool.connect();
    try {
      await client.query('begin');
      await client.query(STAGING + ' on commit drop');
      await new Promise<void>((resolve, reject) => {
        const parser = busboy({ headers: req.headers });
        parser.on('file', (_name, file) => {
          const copy = client.query(
            copyFrom(
              'copy staging (first_name, last_name, email, phone, company, tags) from stdin with (format csv, header)',
            ),
          );
          pipeline(file, copy).then(resolve, reject);
        });
        parser.on('error', reject);
        req.pipe(parser);
      });
      const { rows } = await client.query<{ created: boolean }>(FLOOR_UPSERT);
      const [counts] = (
        await client.query<{ total: number; invalid: number }>(
          `select count(*)::int as total, count(*) filter (where not (${FLOOR_VALID}))::int as invalid from staging`,
        )
      ).rows;
      await client.query('commit');
      const created = rows.filter((row) => row.created).length;
      // A row whose e-mail a later row of the file repeats is written over by it: counted as an update, as the platform counts it.
      res.json({
        rows: counts.total,
        created,
        updated: counts.total - counts.invalid - created,
        skipped: counts.invalid,
      });
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      res.status(500).json({ error: String(error) });
    } finally {
      client.release();
    }
  });
  app.get('/export', async (_req, res) => {
    const client = await exportPool.connect();
    try {
      res.type('text/csv');
      await pipeline(client.query(copyTo(FLOOR_EXPORT)), res);
    } finally {
      client.release();
    }
  });
  const server = app.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.send?.({ urls: { floor: `http://127.0.0.1:${port}` } });
  });
  process.on('SIGTERM', () => {
    server.close();
    void Promise.all([importPool.end(), exportPool.end()]).finally(() => process.exit(0));
  });
}

// ---------------------------------------------------------------------------------------------
// Data

const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'te', 'su', 'no', 'vi', 'be', 'do', 'pa', 'ri'];
const TAGS = ['vip', 'lead', 'partner', 'press', 'investor', 'customer', 'churned', 'trial', 'event', 'referral'];
/** Invalid rows: about this many, spread through the file, half with an e-mail that is no address, half with neither first name nor e-mail. */
const INVALID_ROWS = 16;

/**
 * The import file: names from syllables as the seeded book has them, an e-mail per row except that
 * one row in a hundred repeats the e-mail of the row before it (an update, not a new contact), and a
 * few invalid rows. Answers how many rows the file has.
 */
async function writeImportFile(file: string): Promise<{ rows: number; invalid: number; repeated: number }> {
  let invalid = 0;
  let repeated = 0;
  const invalidEvery = Math.max(2, Math.floor(ROWS / (INVALID_ROWS / 2)));
  const word = (i: number, count: number) =>
    Array.from({ length: count }, (_, k) => SYLLABLES[(i * (7 + k * 5) + k * 3) % SYLLABLES.length]).join('');
  const title = (text: string) => text[0].toUpperCase() + text.slice(1);
  async function* lines() {
    yield 'First Name,Last Name,Email,Phone,Company,Tags\n';
    for (let i = 1; i <= ROWS; i++) {
      const first = title(word(i, 2));
      const last = title(word(Math.floor(i / 12), 3));
      const company = `"${title(word(i % 997, 2))} ${['Inc', 'GmbH', 'Ltd', 'Labs'][i % 4]}, ${i % 50}"`;
      const tags = `${TAGS[i % TAGS.length]};${TAGS[(i >> 3) % TAGS.length]}`;
      const phone = `+44 20 ${String(i).padStart(7, '0')}`;
      let email = `${first.toLowerCase()}.${last.toLowerCase()}${i}@bulk-import.example`;
      if (i % 100 === 0) {
        email = `${title(word(i - 1, 2)).toLowerCase()}.${title(word(Math.floor((i - 1) / 12), 3)).toLowerCase()}${i - 1}@bulk-import.example`;
        repeated++;
      }
      if (i % invalidEvery === 0) {
        invalid++;
        yield `${first},${last},not-an-address,${phone},${company},${tags}\n`;
      } else if (i % invalidEvery === 1 && i > 1) {
        invalid++;
        yield `,${last},,${phone},${company},${tags}\n`;
      } else {
        yield `${first},${last},${email},${phone},${company},${tags}\n`;
      }
    }
  }
  await pipeline(Readable.from(lines()), createWriteStream(file));
  return { rows: ROWS, invalid, repeated };
}

/** Records of a CSV answer whose records end in `ending` (no field of this book holds a line break): streamed, counted, dropped. */
async function countRecords(response: Response, ending: string): Promise<number> {
  if (response.status !== 200 || !response.body) throw new Error(`export answered ${response.status}`);
  const mark = Buffer.from(ending);
  let records = 0;
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of Readable.fromWeb(response.body as never) as AsyncIterable<Buffer>) {
    const bytes = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    let at = bytes.indexOf(mark);
    let last = 0;
    while (at !== -1) {
      records++;
      last = at + mark.length;
      at = bytes.indexOf(mark, last);
    }
    carry = bytes.subarray(Math.max(last, bytes.length - mark.length + 1));
  }
  return records - 1;
}

// ---------------------------------------------------------------------------------------------
// Measuring

/** Runs `work` while sampling the RSS of `pid` every 20 ms; answers its duration and the growth of RSS at its peak. */
async function measure<T>(
  pid: number,
  work: () => Promise<T>,
): Promise<{ result: T; seconds: number; growthMb: number }> {
  const base = rssMb(pid);
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 20);
  const started = performance.now();
  try {
    const result = await work();
    peak = Math.max(peak, rssMb(pid));
    return { result, seconds: (performance.now() - started) / 1000, growthMb: peak - base };
  } finally {
    clearInterval(sampler);
  }
}

interface ImportSummary {
  rows?: number;
  created: number;
  updated: number;
  skipped: number;
  status?: string;
}

/** The file as multipart/form-data, streamed from disk. */
async function importForm(file: string): Promise<FormData> {
  const form = new FormData();
  form.append('file', await openAsBlob(file, { type: 'text/csv' }), 'contacts.csv');
  return form;
}

/**
 * The platform's import: with `Prefer: respond-async`, 202 and the job polled until it ends; a build
 * without the background import answers 200 and its summary at once (the legacy request), said so.
 */
async function platformImport(rest: string, file: string, async: boolean): Promise<ImportSummary & { how: string }> {
  const response = await fetch(`${rest}/api/contacts/import`, {
    method: 'POST',
    body: await importForm(file),
    headers: async ? { prefer: 'respond-async' } : {},
  });
  const body = (await response.json()) as ImportSummary & { id?: string };
  if (response.status === 200)
    return { ...body, how: async ? 'answered at once: no respond-async in this build' : 'legacy waiting request' };
  if (response.status !== 202) throw new Error(`import answered ${response.status}: ${JSON.stringify(body)}`);
  const location = new URL(response.headers.get('location') ?? `/api/contacts/import/${body.id}`, rest);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const job = (await (await fetch(location)).json()) as ImportSummary;
    if (job.status === 'succeeded') return { ...job, how: 'respond-async, polled' };
    if (job.status === 'failed' || job.status === 'cancelled')
      throw new Error(`import ${job.status}: ${JSON.stringify(job)}`);
  }
}

async function floorImport(floor: string, file: string): Promise<ImportSummary> {
  const response = await fetch(`${floor}/import`, { method: 'POST', body: await importForm(file) });
  const body = (await response.json()) as ImportSummary;
  if (response.status !== 200) throw new Error(`floor import answered ${response.status}: ${JSON.stringify(body)}`);
  return body;
}

const verdict = (met: boolean) => (met ? 'met' : 'MISSED');

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const platformDb = await benchDatabase('bench_bulk');
  const copies: Awaited<ReturnType<typeof benchDatabase>>[] = [];
  const children: Child[] = [];
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'bench-bulk-files-'));
  const start = (script: string, role: string, env: Record<string, string>, execArgv: string[] = []) =>
    startChild(script, [role], env, execArgv).then((child) => {
      children.push(child);
      return child;
    });
  const stop = async (child: Child) => {
    children.splice(children.indexOf(child), 1);
    await child.stop();
  };
  try {
    console.log(`bulk bench: ${ROWS} rows, ${os.cpus().length} cores, PostgreSQL database ${platformDb.name}`);
    // The platform's migrations make the schema; the book is seeded; copies are taken before anyone imports.
    await stop(await start(here, '--serve-platform', { BENCH_PLATFORM_DATABASE_URL: platformDb.url }));
    const db = new pg.Client({ connectionString: platformDb.url });
    await db.connect();
    await seedContacts(db, BASE_ROWS);
    const { rows: ids } = await db.query<{ id: string }>('select id from contacts.contact limit 1000');
    await db.end();
    const copyOf = async (prefix: string) => {
      const copy = await benchDatabase(prefix, platformDb.name);
      copies.push(copy);
      return copy;
    };
    const floorDb = await copyOf('bench_bulk_floor');
    const legacyDb = process.env.BENCH_LEGACY_IMPORT ? await copyOf('bench_bulk_legacy') : undefined;

    const file = path.join(workDir, 'import.csv');
    const written = await writeImportFile(file);
    console.log(
      `import file: ${written.rows} rows (${written.repeated} repeat an earlier e-mail, ${written.invalid} invalid); book before: ${BASE_ROWS} contacts`,
    );

    const platform = await start(
      here,
      '--serve-platform',
      { BENCH_PLATFORM_DATABASE_URL: platformDb.url },
      PLATFORM_NODE_FLAGS,
    );
    const floor = await start(here, '--serve-floor', {
      BENCH_FLOOR_IMPORT_URL: floorDb.url,
      BENCH_FLOOR_EXPORT_URL: platformDb.url,
    });
    const pid = platform.process.pid!;
    const rest = platform.urls.rest;
    console.log(
      `platform process: RSS ${fmt(rssMb(pid))} MB after start (node ${PLATFORM_NODE_FLAGS.join(' ') || 'default flags'})`,
    );

    // Import: the floor, then the platform under the steady reads.
    const floorImported = await measure(floor.process.pid!, () => floorImport(floor.urls.floor, file));
    let importing = true;
    const reads = steadyLoadWhile(
      rest,
      STEADY_RATE,
      () => importing,
      () => ({
        path: `/api/contacts/${ids[Math.floor(Math.random() * ids.length)].id}`,
      }),
    );
    const imported = await measure(pid, () => platformImport(rest, file, true)).finally(() => {
      importing = false;
    });
    const times = await reads;
    const floorRate = ROWS / floorImported.seconds;
    const importRate = ROWS / imported.seconds;
    const importRatio = importRate / floorRate;
    console.log(`\nimport of ${ROWS} rows:`);
    console.log(
      `  floor (COPY to staging + INSERT ... ON CONFLICT): ${fmt(floorImported.seconds, 1)} ` +
        `s, ${fmt(floorRate)} rows/s; created ${floorImported.result.created}, ` +
        `updated ${floorImported.result.updated}, skipped ${floorImported.result.skipped}`,
    );
    console.log(
      `  platform REST (${imported.result.how}): ${fmt(imported.seconds, 1)} s, ${fmt(importRate)} rows/s; ` +
        `created ${imported.result.created}, updated ${imported.result.updated}, skipped ${imported.result.skipped}`,
    );
    console.log(`  ratio ${fmt(importRatio, 2)} of the floor (target >= 0.5: ${verdict(importRatio >= 0.5)})`);
    console.log(
      `  platform RSS growth at peak ${fmt(imported.growthMb)} MB (target <= 200 MB: ${verdict(imported.growthMb <= 200)})`,
    );
    const p99 = percentile(times, 0.99);
    console.log(
      `  GET /api/contacts/{id} at ${STEADY_RATE}/s during the import: ${times.length} requests, ` +
        `p50 ${fmt(percentile(times, 0.5), 1)} ms, p99 ${fmt(p99, 1)} ms (target <= 50 ms: ${verdict(p99 <= 50)})`,
    );

    if (legacyDb) {
      const legacy = await start(
        here,
        '--serve-platform',
        { BENCH_PLATFORM_DATABASE_URL: legacyDb.url },
        PLATFORM_NODE_FLAGS,
      );
      const waited = await measure(legacy.process.pid!, () => platformImport(legacy.urls.rest, file, false));
      await stop(legacy);
      const legacyRatio = ROWS / waited.seconds / floorRate;
      console.log(
        `  legacy waiting request: ${fmt(waited.seconds, 1)} s, ${fmt(ROWS / waited.seconds)} ` +
          `rows/s, ${fmt(legacyRatio, 2)} of the floor, RSS growth ${fmt(waited.growthMb)} MB`,
      );
    }

    // Export of the book the platform now holds. VACUUM first: the first scan after a million inserts
    // would otherwise set their hint bits (writing the table again), paid by whichever export ran first.
    const check = new pg.Client({ connectionString: platformDb.url });
    await check.connect();
    await check.query('vacuum analyze contacts.contact');
    const live = Number(
      (await check.query<{ count: string }>('select count(*) from contacts.contact where not deleted')).rows[0].count,
    );
    await check.end();
    // Uncompressed, as the floor answers: the REST adapter would otherwise gzip the file for a client that
    // accepts it (fetch does), and the comparison would be of compression, not of the export.
    const variants = [
      { name: 'floor', pid: floor.process.pid!, url: `${floor.urls.floor}/export`, encoding: 'identity', ending: '\n' },
      { name: 'platform', pid, url: `${rest}/api/contacts/export`, encoding: 'identity', ending: '\r\n' },
      { name: 'platform gzip', pid, url: `${rest}/api/contacts/export`, encoding: 'gzip', ending: '\r\n' },
    ];
    const seconds = new Map<string, number[]>(variants.map((variant) => [variant.name, []]));
    let exportGrowth = 0;
    for (let round = 1; round <= EXPORT_ROUNDS; round++) {
      // Interleaved, in a different order each round, so that drift of the machine hits all alike.
      for (const variant of round % 2 ? variants : [...variants].reverse()) {
        const run = await measure(variant.pid, async () =>
          countRecords(await fetch(variant.url, { headers: { 'accept-encoding': variant.encoding } }), variant.ending),
        );
        if (run.result !== live)
          throw new Error(`${variant.name} export wrote ${run.result} records; ${live} contacts are live`);
        seconds.get(variant.name)!.push(run.seconds);
        if (variant.pid === pid) exportGrowth = Math.max(exportGrowth, run.growthMb);
      }
    }
    const [floorSeconds, platformSeconds, gzipSeconds] = variants.map((variant) => median(seconds.get(variant.name)!));
    const exportRatio = floorSeconds / platformSeconds;
    console.log(`\nexport of ${live} contacts (median of ${EXPORT_ROUNDS} interleaved runs):`);
    console.log(
      `  floor (COPY (SELECT same columns) TO STDOUT): ${fmt(floorSeconds, 2)} s, ${fmt(live / floorSeconds)} rows/s`,
    );
    console.log(`  platform REST: ${fmt(platformSeconds, 2)} s, ${fmt(live / platformSeconds)} rows/s`);
    console.log(`  ratio ${fmt(exportRatio, 2)} of the floor (target >= 0.5: ${verdict(exportRatio >= 0.5)})`);
    console.log(
      `  platform REST with Accept-Encoding: gzip (what browsers and curl --compressed get): ${fmt(gzipSeconds, 2)} s, ${fmt(live / gzipSeconds)} rows/s`,
    );
    console.log(
      `  platform RSS growth at peak ${fmt(exportGrowth)} MB (target <= 200 MB: ${verdict(exportGrowth <= 200)})`,
    );
  } finally {
    for (const child of children.reverse()) await child.stop();
    for (const copy of copies) await copy.drop();
    await platformDb.drop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

exitWithHelpIfAsked(`
usage: npm run bench:bulk

Import and export of a million contacts on PostgreSQL (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/postgres; databases of its own are made and dropped), each against
a hand-written floor: rows per second and their ratio, the platform's peak RSS growth, and the p99 of
GET /api/contacts/{id} at 100 requests per second during the import. BENCH_ROWS (default 1048576)
runs smaller; BENCH_ROUNDS (default 3) sets the export runs; BENCH_LEGACY_IMPORT=1 also times the legacy waiting import; BENCH_NODE_FLAGS sets the
platform's Node flags (default: npm start's); BENCH_VERBOSE shows the children's output.
`);

if (process.argv.includes('--serve-platform')) {
  await servePlatform();
} else if (process.argv.includes('--serve-floor')) {
  await serveFloor();
} else {
  await main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
