import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { loadConfig } from '#lib/config.js';
import { Migration, openDatabase, type Orm } from '#lib/data/database.js';
import { encodeCursor } from '#lib/data/event-cursor.js';
import { EventFeed, eventLogSql, type Positioned } from '#lib/data/event-feed.js';
import { createLogger } from '#lib/observability/logger.js';
import { createTestDatabase, type TestDatabase } from '#test/support/platform.js';

const CHANNEL = 'platform_events_feed_test';

class FeedTable extends Migration {
  override name = 'FeedTable';
  override up(): void {
    this.addSql(`create table feed_test (
      id uuid primary key default gen_random_uuid(),
      seq bigint generated always as identity unique,
      label text not null
    )`);
    for (const statement of eventLogSql('feed_test', CHANNEL)) this.addSql(statement);
  }
}

/** An event of the test's log: its row's label. */
interface Labelled {
  label: string;
}

/** The next `count` events of a follower, each within `ms`. */
async function take(
  follower: AsyncIterator<Positioned<Labelled>>,
  count: number,
  ms = 1000,
): Promise<Positioned<Labelled>[]> {
  const taken: Positioned<Labelled>[] = [];
  for (let i = 0; i < count; i += 1) {
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([
      follower.next(),
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`event ${i} not within ${ms} ms`)), ms)),
      ),
    ]).finally(() => clearTimeout(timer));
    if (next.done) throw new Error('the follower ended');
    taken.push(next.value);
  }
  return taken;
}

const kinds = process.env.TEST_DATABASE_URL ? (['postgresql', 'pglite'] as const) : (['pglite'] as const);

describe.each(kinds)('an event feed on %s', (kind) => {
  let database: TestDatabase;
  let dataDir: string;
  let orm: Orm;
  let feed: EventFeed<Labelled, { reads: number }>;
  let subjectReads = 0;

  const insert = (label: string) =>
    orm.em.fork().execute('insert into "social"."feed_test" (label) values (?)', [label], 'run');

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'event-feed-test-'));
    database = await createTestDatabase({ embedded: kind === 'pglite' });
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
    });
    const logger = createLogger(config);
    orm = await openDatabase(config, logger, { service: 'social', entities: [], migrations: [FeedTable] });
    feed = await EventFeed.open(
      config,
      orm,
      { table: '"social"."feed_test"', channel: CHANNEL, eventOf: (row) => ({ label: row.label as string }) },
      logger,
      // Each event's subject: its label's, when the label has one (`subject-...`), counting the reads.
      {
        idOf: (event) => event.label,
        load: (labels) => {
          subjectReads += 1;
          return Promise.resolve(
            new Map(
              labels.filter((label) => label.startsWith('subject-')).map((label) => [label, { reads: subjectReads }]),
            ),
          );
        },
      },
    );
  }, 60_000);
  afterAll(async () => {
    await feed?.close();
    await orm?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts at the present: an event committed before is not delivered, one after is', async () => {
    await insert('past');
    const follower = feed.follow(await feed.present());
    await insert('now');
    expect((await take(follower, 1)).map((item) => item.event.label)).toEqual(['now']);
    await follower.return?.();
  });

  it('resumes after a cursor with every later event once, in order, then live', async () => {
    const live = feed.follow(await feed.present());
    for (const label of ['a', 'b', 'c']) await insert(label);
    const [a, b, c] = await take(live, 3);
    await live.return?.();
    const resumed = feed.follow(await feed.positionAfter(a.cursor));
    expect((await take(resumed, 2)).map((item) => item.cursor)).toEqual([b.cursor, c.cursor]);
    await insert('d');
    expect((await take(resumed, 1)).map((item) => item.event.label)).toEqual(['d']);
    await resumed.return?.();
  });

  it('refuses an after that is no cursor, or names no event kept, naming after', async () => {
    await expect(feed.positionAfter('garbage')).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      fields: [{ field: 'after' }],
    });
    await expect(feed.positionAfter(encodeCursor({ xact: 1n, seq: 999_999n }))).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      fields: [{ field: 'after' }],
    });
  });

  it('hands many followers one batch, each event to each once', async () => {
    const from = await feed.present();
    const followers = Array.from({ length: 20 }, () => feed.follow(from));
    for (let i = 0; i < 5; i += 1) await insert(`fan-${i}`);
    for (const follower of followers) {
      expect((await take(follower, 5)).map((item) => item.event.label)).toEqual([0, 1, 2, 3, 4].map((i) => `fan-${i}`));
      await follower.return?.();
    }
  });

  it('reads the subjects of a batch once for every follower, and none of an event that has none', async () => {
    const from = await feed.present();
    const followers = Array.from({ length: 10 }, () => feed.follow(from));
    // Past its first read of its own, each follower takes the shared reader's batches.
    await insert('warm');
    for (const follower of followers) await take(follower, 1);
    const before = subjectReads;
    await orm.em
      .fork()
      .execute(`insert into "social"."feed_test" (label) values ('subject-1'), ('no subject')`, [], 'run');
    for (const follower of followers) {
      const [withSubject, without] = await take(follower, 2);
      expect(feed.subjectOf(withSubject.event)).toEqual({ reads: before + 1 });
      expect(feed.subjectOf(without.event)).toBeNull();
      await follower.return?.();
    }
    expect(subjectReads).toBe(before + 1);
    // An event the feed did not read itself has nothing read along: its reader reads the subject anew.
    expect(feed.subjectOf({ label: 'subject-1' })).toBeUndefined();
  });

  // PGlite has one connection: its transactions never overlap.
  (kind === 'postgresql' ? it : it.skip)(
    'misses nothing and repeats nothing when two transactions commit out of id order',
    async () => {
      const follower = feed.follow(await feed.present());
      const older = new pg.Client({ connectionString: database.url });
      const newer = new pg.Client({ connectionString: database.url });
      await Promise.all([older.connect(), newer.connect()]);
      try {
        await older.query('begin');
        await older.query(`insert into "social"."feed_test" (label) values ('older')`);
        await newer.query(`insert into "social"."feed_test" (label) values ('newer')`);
        // The newer commit waits behind the older transaction, which still runs.
        const first = follower.next();
        const early = await Promise.race([
          first.then(() => 'delivered'),
          new Promise((resolve) => setTimeout(() => resolve('waiting'), 300)),
        ]);
        expect(early).toBe('waiting');
        await older.query('commit');
        const olderEvent = (await first).value as Positioned<Labelled>;
        const [newerEvent] = await take(follower, 1);
        expect([olderEvent.event.label, newerEvent.event.label]).toEqual(['older', 'newer']);
        let timer: NodeJS.Timeout | undefined;
        const more = await Promise.race([
          follower.next().then(() => 'more'),
          new Promise((resolve) => (timer = setTimeout(() => resolve('none'), 300))),
        ]).finally(() => clearTimeout(timer));
        expect(more).toBe('none');
        const resumed = feed.follow(await feed.positionAfter(olderEvent.cursor));
        expect((await take(resumed, 1)).map((item) => item.event.label)).toEqual(['newer']);
        await resumed.return?.();
      } finally {
        await Promise.all([older.end(), newer.end()]);
        await follower.return?.();
      }
    },
  );
});
