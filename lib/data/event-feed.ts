import type { EntityClass } from '@mikro-orm/core';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { eventFeedFollowers } from '../observability/metrics.js';
import type { Orm } from './database.js';
import { pageSizeOf, type KeysetArgs, type KeysetConnection } from './keyset.js';
import { notACursor } from './pagination.js';
import { decodeCursor, encodeCursor, type FeedPosition } from './event-cursor.js';
import { listenOnPglite, listenOnPostgres, type EventSignals } from './event-notifications.js';
import { BATCH, Follower, type Positioned } from './event-follower.js';

export type { Positioned } from './event-follower.js';

/**
 * What makes a service's audit table an event log that can be followed, for its migration: the
 * writing transaction's id on every row (a default, so no writer can forget it), an index in reading
 * order, and a statement trigger that notifies `channel` on commit. A migration runs it once; never
 * change it (a later change is a new migration).
 */
export function eventLogSql(table: string, channel: string): string[] {
  return [
    `alter table ${table} add column xact xid8 not null default pg_current_xact_id()`,
    `create index ${table}_xact_seq_idx on ${table} (xact, seq)`,
    `create function ${table}_notify() returns trigger language plpgsql as $$
      begin
        perform pg_notify('${channel}', '');
        return null;
      end $$`,
    `create trigger ${table}_notify after insert on ${table} for each statement execute function ${table}_notify()`,
  ];
}

/** How long a feed keeps its events at least: an `after` older than what is kept is refused, naming `after`. */
export const EVENT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** The channel a service's event log notifies (`eventLogSql`): one per service, in its own database. */
export const eventChannelOf = (service: string): string => `platform_events_${service}`;

/** How a feed reads its log: the table (schema-qualified) and how a row becomes the service's event. */
export interface EventLog<Event> {
  /** `"schema"."table"`, with `xact` and `seq` columns (`eventLogSql`). */
  table: string;
  channel: string;
  /** An event from its row as the database answers it (column names). */
  eventOf(row: Record<string, unknown>): Event;
}

/**
 * Where a stream that starts "now" begins: at the horizon, skipping the events that had already
 * committed beyond it (a transaction still running elsewhere holds the horizon back, and what
 * committed after it is history to this subscriber, not news).
 */
export interface StartingPoint extends FeedPosition {
  alreadyCommitted?: ReadonlySet<bigint>;
}

/** A condition on the log's rows: SQL over the alias `e` (column names), with its values in order. */
export interface EventCondition {
  sql: string;
  params: readonly unknown[];
}

/**
 * Which events of a feed a reader may see, said once for both ways of reading the feed: as SQL
 * conditions for a page of the query (`page`), and as a test of each event a subscription follows
 * (`follow`). A service states its rule here, so the list and the stream can never disagree.
 */
export interface EventVisibility<Event> {
  where: readonly EventCondition[];
  keep: (event: Event) => boolean;
}

/**
 * A page of a feed as a Relay connection (the query of a stream's name). Its total is counted only
 * when a client selects it (a getter): a reader of history rarely asks, and counting a week of events
 * would otherwise cost every page a second statement.
 */
export interface EventConnection<Event> extends KeysetConnection<Event> {
  readonly totalCount: Promise<number>;
  readonly totalExact: true;
}

/**
 * The entity each event names (a contact, a post), read along with every batch the feed reads, in
 * one statement for all of its events, so that a thousand subscribers selecting it cost one read
 * rather than a thousand. What each subscriber may see of it is still decided for each (the shield
 * and the field rules run per subscriber); this is only where the data comes from.
 */
export interface EventSubjects<Event, Subject> {
  idOf: (event: Event) => string;
  /** The subjects of these ids that exist; an id not answered has none (deleted, say). */
  load: (ids: readonly string[]) => Promise<ReadonlyMap<string, Subject>>;
}

/** How soon the reader looks again while committed events wait behind a transaction still running. */
const HELD_BACK_RETRY_MS = 50;
/** A read now and then with no notification at all: a notification lost in a drop costs at most this. */
const SAFETY_READ_MS = 10_000;

/**
 * A service's event log, followed by any number of subscribers in this process with one reader.
 *
 * Reading rule: only events whose transaction is below the reader's snapshot horizon
 * (`pg_snapshot_xmin(pg_current_snapshot())`) are read, in (xact, seq) order. Every transaction
 * below the horizon has ended, so no event can later appear before a position already read: two
 * transactions that commit out of id order are both read, the later id after the earlier, and a
 * cursor resumes with nothing missed and nothing twice. An event committed behind a transaction still
 * running waits until that one ends (the reader looks again every 50 ms while such events exist).
 *
 * Delivery: the log's trigger notifies on commit (PostgreSQL's LISTEN/NOTIFY reaches every process;
 * PGlite its own). The one reader per process reads each new batch once and hands it to every
 * follower in memory; a follower behind the batch (it resumed from an older cursor, or its consumer
 * was slow) reads its gap from the database itself, and then goes on with the shared batches.
 */
export class EventFeed<Event extends object, Subject = never> {
  private readonly followers = new Set<Follower<Event>>();
  /** The subject read along with each event the feed read (`EventSubjects`), `null` when it had none. */
  private readonly subjects = new WeakMap<Event, Subject | null>();
  private head: FeedPosition | undefined;
  /** Events committed while nobody followed, left unread: a write costs no read where nobody subscribes. */
  private headStale = false;
  private reading: Promise<void> | undefined;
  private again = false;
  private heldBack: NodeJS.Timeout | undefined;
  private safety: NodeJS.Timeout | undefined;
  private signals: EventSignals | undefined;
  private closed = false;
  private stopCounting = (): void => undefined;

  private constructor(
    private readonly orm: Orm,
    private readonly log: EventLog<Event>,
    private readonly logger: Logger,
    private readonly subjectsOf?: EventSubjects<Event, Subject>,
  ) {}

  /** Opens the feed of `log`: its one listening connection (PostgreSQL) or its listener (PGlite). */
  static async open<Event extends object, Subject = never>(
    config: Config,
    orm: Orm,
    log: EventLog<Event>,
    logger: Logger,
    subjects?: EventSubjects<Event, Subject>,
  ): Promise<EventFeed<Event, Subject>> {
    const feed = new EventFeed(orm, log, logger.child({ component: 'event-feed', channel: log.channel }), subjects);
    const { xact, seq } = await feed.present();
    feed.head = { xact, seq };
    const signal = () => feed.readNew();
    feed.signals = config.env.DATABASE_URL
      ? listenOnPostgres(config.env.DATABASE_URL, log.channel, signal, feed.logger)
      : await listenOnPglite(orm, log.channel, signal);
    feed.safety = setInterval(signal, SAFETY_READ_MS).unref();
    feed.stopCounting = eventFeedFollowers.readOnScrape((gauge) => gauge.set({ channel: log.channel }, feed.following));
    return feed;
  }

  /**
   * The feed of an entity's audit table (made a log by `eventLogSql`), its rows read as that entity:
   * the same for every service.
   */
  static forEntity<Event extends object, Subject = never>(
    config: Config,
    orm: Orm,
    entity: EntityClass<Event>,
    service: string,
    logger: Logger,
    subjects?: EventSubjects<Event, Subject>,
  ): Promise<EventFeed<Event, Subject>> {
    const meta = orm.getMetadata().get(entity);
    const log: EventLog<Event> = {
      table: `"${meta.schema ?? service}"."${meta.tableName}"`,
      channel: eventChannelOf(service),
      eventOf: (row) => orm.em.fork().map(entity, row as never),
    };
    return EventFeed.open(config, orm, log, logger, subjects);
  }

  /** The position "now": every event followed from it committed after this call began. */
  async present(): Promise<StartingPoint> {
    const [row] = await this.orm.em.fork().execute<{ horizon: string; committed: string[] }[]>(
      `select pg_snapshot_xmin(now.snapshot)::text as horizon,
          array(select distinct e.xact::text from ${this.log.table} as e where e.xact >= pg_snapshot_xmin(now.snapshot)) as committed
        from (select pg_current_snapshot() as snapshot) as now`,
    );
    const committed = row.committed.map((xact) => BigInt(xact));
    return { xact: BigInt(row.horizon), seq: 0n, ...(committed.length && { alreadyCommitted: new Set(committed) }) };
  }

  /**
   * The position an `after` argument names: BAD_USER_INPUT naming `after` when it is no cursor, or
   * names an event no longer kept (the log is swept after its retention).
   */
  async positionAfter(after: string): Promise<FeedPosition> {
    const position = decodeCursor(after);
    if (!position) throw notACursor('after');
    const [kept] = await this.orm.em
      .fork()
      .execute<unknown[]>(`select 1 from ${this.log.table} where xact = ?::text::xid8 and seq = ?`, [
        position.xact.toString(),
        position.seq.toString(),
      ]);
    if (!kept) throw AppError.badInput('after', 'names an event older than the events kept, or none at all');
    return position;
  }

  /**
   * Events after `after`, oldest first, at most `limit` (the shared reader's batch, or a follower's
   * catch-up), with their subjects read along.
   */
  async read(after: FeedPosition, limit: number): Promise<Positioned<Event>[]> {
    const batch = await this.select([beyond('>', after)], 'asc', limit);
    if (this.subjectsOf && batch.length) {
      const subjects = this.subjectsOf;
      const found = await subjects.load([...new Set(batch.map(({ event }) => subjects.idOf(event)))]);
      for (const { event } of batch) this.subjects.set(event, found.get(subjects.idOf(event)) ?? null);
    }
    return batch;
  }

  /**
   * The subject read along with `event` as the feed read it (`EventSubjects`): `null` when it had
   * none then, `undefined` for an event the feed did not read (a page of history), to be read anew.
   */
  subjectOf(event: Event): Subject | null | undefined {
    return this.subjects.get(event);
  }

  /**
   * A page of the events `where` keeps, oldest first, as a Relay connection (`first`/`after`,
   * `last`/`before`): the query of a stream's name. Its cursors are the stream's own and it reads by
   * the stream's rule (nothing beyond the horizon), so a client that reads the history and then
   * follows with the last edge's cursor misses nothing and gets nothing twice. `after` is checked as
   * the stream checks it (`positionAfter`): no cursor, or one no longer kept, is BAD_USER_INPUT.
   */
  async page(args: KeysetArgs, where: readonly EventCondition[] = []): Promise<EventConnection<Event>> {
    const { size, backward } = pageSizeOf(args);
    const after = args.after ? await this.positionAfter(args.after) : null;
    // Paging back needs no kept event: a `before` older than the log only finds nothing before it.
    const before = args.before ? decodeCursor(args.before) : null;
    if (args.before && !before) throw notACursor('before');
    const conditions = [...where, ...(after ? [beyond('>', after)] : []), ...(before ? [beyond('<', before)] : [])];
    // One row more than the page tells whether more follow.
    const rows = await this.select(conditions, backward ? 'desc' : 'asc', size + 1);
    const more = rows.length > size;
    const page = rows.slice(0, size);
    if (backward) page.reverse();
    const count = () => this.count(where);
    return {
      get edges() {
        return page.map(({ event, cursor }) => ({ cursor, node: event }));
      },
      nodes: page.map(({ event }) => event),
      pageInfo: {
        hasNextPage: backward ? before !== null : more,
        hasPreviousPage: backward ? more : after !== null,
        startCursor: page[0]?.cursor ?? null,
        endCursor: page.at(-1)?.cursor ?? null,
      },
      get totalCount() {
        return count();
      },
      totalExact: true,
    };
  }

  /** The events under the horizon that `conditions` keep, in log order (`direction`), at most `limit`. */
  private async select(
    conditions: readonly EventCondition[],
    direction: 'asc' | 'desc',
    limit: number,
  ): Promise<Positioned<Event>[]> {
    const rows = await this.orm.em.fork().execute<Record<string, unknown>[]>(
      `select e.*, e.xact::text as feed_xact, e.seq::text as feed_seq from ${this.log.table} as e
        where e.xact < pg_snapshot_xmin(pg_current_snapshot())${andEach(conditions)}
        order by e.xact ${direction}, e.seq ${direction} limit ?`,
      [...conditions.flatMap((condition) => condition.params), limit],
    );
    return rows.map((row) => {
      const position = { xact: BigInt(row.feed_xact as string), seq: BigInt(row.feed_seq as string) };
      return { event: this.log.eventOf(row), position, cursor: encodeCursor(position) };
    });
  }

  /** How many events under the horizon `where` keeps: the whole list a page belongs to. */
  private async count(where: readonly EventCondition[]): Promise<number> {
    const [row] = await this.orm.em.fork().execute<{ total: string }[]>(
      `select count(*)::text as total from ${this.log.table} as e
        where e.xact < pg_snapshot_xmin(pg_current_snapshot())${andEach(where)}`,
      where.flatMap((condition) => condition.params),
    );
    return Number(row?.total ?? 0);
  }

  /**
   * Every event after `from` that `keep` keeps (the subscriber may see it), oldest first, then each
   * new one as it commits, until the consumer returns (or the feed closes). Memory stays bounded: a
   * consumer that falls behind is read again from the database when it catches up.
   */
  follow(from: StartingPoint, keep: (event: Event) => boolean = () => true): AsyncIterableIterator<Positioned<Event>> {
    const start = { xact: from.xact, seq: from.seq };
    // The first follower after a quiet spell reads its own way in; the shared reader goes on from there.
    if (this.headStale && !this.followers.size) {
      this.head = start;
      this.headStale = false;
    }
    const follower = new Follower(this, start, keep, from.alreadyCommitted, () => this.followers.delete(follower));
    this.followers.add(follower);
    return follower;
  }

  /** How many subscribers follow the feed now: a subscriber that left is no longer counted. */
  get following(): number {
    return this.followers.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopCounting();
    clearInterval(this.safety);
    clearTimeout(this.heldBack);
    await this.signals?.close();
    for (const follower of this.followers) follower.end();
    await this.reading?.catch(() => undefined);
  }

  /** Reads what is new since the head, once, however many signals came meanwhile. */
  private readNew(): void {
    if (this.closed) return;
    if (!this.followers.size) {
      this.headStale = true;
      return;
    }
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.readBatches()
      .catch((error: unknown) =>
        this.logger.warn({ err: error }, 'reading new events failed; the next signal tries again'),
      )
      .finally(() => {
        this.reading = undefined;
        if (this.again) {
          this.again = false;
          this.readNew();
        }
      });
  }

  private async readBatches(): Promise<void> {
    for (;;) {
      const from = this.head!;
      const batch = await this.read(from, BATCH);
      if (batch.length) {
        this.head = batch[batch.length - 1].position;
        for (const follower of this.followers) follower.offer(from, batch);
      }
      if (batch.length === BATCH) continue;
      if (!this.heldBack && (await this.committedBeyond(this.head!))) {
        this.heldBack = setTimeout(() => {
          this.heldBack = undefined;
          this.readNew();
        }, HELD_BACK_RETRY_MS);
      }
      return;
    }
  }

  /** True when events beyond `position` are committed but still behind the horizon (a transaction before them runs on). */
  private async committedBeyond(position: FeedPosition): Promise<boolean> {
    const [row] = await this.orm.em
      .fork()
      .execute<unknown[]>(`select 1 from ${this.log.table} where (xact, seq) > (?::text::xid8, ?::bigint) limit 1`, [
        position.xact.toString(),
        position.seq.toString(),
      ]);
    return Boolean(row);
  }
}

/** The events `comparison` (`>` after, `<` before) places relative to `position` in log order. */
function beyond(comparison: '>' | '<', position: FeedPosition): EventCondition {
  return {
    sql: `(e.xact, e.seq) ${comparison} (?::text::xid8, ?::bigint)`,
    params: [position.xact.toString(), position.seq.toString()],
  };
}

function andEach(conditions: readonly EventCondition[]): string {
  return conditions.map((condition) => ` and (${condition.sql})`).join('');
}
