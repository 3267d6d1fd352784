import type { EntityManager } from '#lib/data/database.js';
import { AppError } from '#lib/errors.js';
import { isUuid } from '#lib/ids.js';
import { pageSizeOf, type KeysetArgs } from '#lib/data/keyset.js';
import { notACursor, type Window } from '#lib/data/pagination.js';
import type { Contact } from '../contact/contact.entity.js';
import { duplicateQueries } from './duplicate.queries.js';
import type { ContactDuplicate, ContactDuplicatePair, DuplicateReason } from './duplicate.types.js';

/** The duplicates of one contact, at most `first` of them. */
export interface DuplicatesOf {
  contactId: string;
  first: number;
}

export const DUPLICATES_MAX = 50;

/** How often the background refresh looks for changed contacts (it recomputes only their pairs). */
export const PAIRS_REFRESH_MS = 30_000;
/**
 * How far before a refresh's start the next one looks for changes: a write stamps `updated_at` before
 * it commits (the API's clock, an import batch's transaction), so a change committed after a refresh
 * began may carry an earlier time. Changes within it are looked at twice, which costs little.
 */
const CHANGE_MARGIN = '1 minute';
/** The advisory lock a refresh of the book's pairs holds, in every process on the database. */
export const PAIRS_LOCK = `hashtext('contacts.duplicate_pairs')`;
/**
 * Past this share of the book changed, the whole book is computed again instead: at a million contacts
 * a changed contact's pairs cost about 1 to 3 ms (its blocks read and keyed), the whole book about 45 s.
 */
const WHOLE_BOOK_SHARE = 1 / 20;
/** Up to this many changed contacts, their pairs are computed again whatever the book's size (a few seconds at most). */
const CHANGES_ALWAYS_KEPT = 1_000;

type ContactRow = Contact & { probe_id?: string; score?: number; reasons?: DuplicateReason[] };
interface PairRow {
  a: string;
  b: string;
  score: number;
  reasons: DuplicateReason[];
}

/**
 * Finds contacts likely to be one person (migration ContactDuplicates holds the keys and indexes).
 * The duplicates of given contacts are looked up on the indexes as asked; the book's pairs are
 * computed in the background and read a page at a time, minus any contact deleted or merged since.
 */
export class DuplicateService {
  constructor(private readonly em: EntityManager) {}

  /** Duplicates of each contact asked about, best first, in one statement. */
  async ofContacts(keys: readonly DuplicatesOf[]): Promise<Map<string, ContactDuplicate[]>> {
    const found = new Map<string, ContactDuplicate[]>();
    const ids = [...new Set(keys.map((key) => key.contactId).filter(isUuid))];
    if (!ids.length) return found;
    const most = Math.max(...keys.map((key) => key.first));
    const rows = await this.em.execute<ContactRow[]>(duplicateQueries(this.em).ofContacts, [
      `{${ids.join(',')}}`,
      most,
    ]);
    for (const { probe_id, score, reasons, ...contact } of rows) {
      const list = found.get(probe_id!) ?? [];
      list.push({ contact: toContact(contact), score: roundScore(score!), reasons: reasons! });
      found.set(probe_id!, list);
    }
    return found;
  }

  /** A page of the book's pairs, best first, by keyset (`after` a pair's cursor). */
  async pairConnection(args: KeysetArgs) {
    const { size, backward } = pageSizeOf(args);
    const after = args.after ? decodePairCursor(args.after, 'after') : null;
    const before = args.before ? decodePairCursor(args.before, 'before') : null;
    await this.ensurePairs();
    // One row more than the page tells whether more follow; back from `before`, read in reverse and turned round.
    const [rows, total] = await Promise.all([
      backward ? this.pairRowsBefore(before, size + 1) : this.pairRows(after, size + 1, 0),
      this.pairCount(),
    ]);
    const more = rows.length > size;
    const page = rows.slice(0, size);
    if (backward) page.reverse();
    const nodes = await this.withContacts(page);
    const edges = nodes.map((node, index) => ({ cursor: pairCursor(page[index]), node }));
    return {
      edges,
      nodes,
      totalCount: total,
      pageInfo: {
        hasNextPage: backward ? Boolean(before) : more,
        hasPreviousPage: backward ? more : Boolean(after),
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      },
    };
  }

  /** A numbered page of the book's pairs (the REST list). */
  async pairPage(window: Window): Promise<{ items: ContactDuplicatePair[]; total: number }> {
    await this.ensurePairs();
    const [rows, total] = await Promise.all([this.pairRows(null, window.limit, window.offset), this.pairCount()]);
    return { items: await this.withContacts(rows), total };
  }

  /**
   * Brings the book's pairs up to date: the pairs of the contacts changed since the last refresh are
   * computed again (or the whole book, `force`, on its first computation, or when much of it changed).
   * Answers whether it wrote. Readers see the previous pairs until it commits.
   */
  async refreshPairs(force = false): Promise<boolean> {
    const sql = duplicateQueries(this.em);
    const [last] = await this.em.execute<{ changes_from: string | null }[]>(sql.lastRefresh);
    // The next refresh looks from a little before this one begins: a write stamped just before it may commit just after.
    const [{ nextFrom, signature }] = await this.em.execute<{ nextFrom: string; signature: string }[]>(
      `select (clock_timestamp() - interval '${CHANGE_MARGIN}')::text as "nextFrom", (${sql.signature}) as signature`,
    );
    const since = force ? null : (last?.changes_from ?? null);
    let whole = since === null;
    if (since !== null) {
      const [{ changed, live }] = await this.em.execute<{ changed: number; live: number }[]>(sql.changedCount, [since]);
      if (changed === 0) return false;
      whole = changed > Math.max(CHANGES_ALWAYS_KEPT, live * WHOLE_BOOK_SHARE);
    }
    return this.em.transactional(async (tx) => {
      // One refresh at a time across every process on the database: another that holds it computes the
      // same pairs, so the background gives way; a forced one (a new book's first read) waits its turn.
      const [{ taken }] = await tx.execute<{ taken: boolean }[]>(
        force
          ? `select true as taken from pg_advisory_xact_lock(${PAIRS_LOCK})`
          : `select pg_try_advisory_xact_lock(${PAIRS_LOCK}) as taken`,
      );
      if (!taken) return false;
      if (whole) {
        await tx.execute(sql.clearPairs);
        await tx.execute(sql.refreshPairs);
      } else {
        await tx.execute(sql.dropChanged, [since, since]);
        await tx.execute(sql.refreshChanged, [since]);
      }
      await tx.execute(sql.refreshed, [signature, nextFrom]);
      return true;
    });
  }

  /** A book never computed (a new database) is computed on its first read; afterwards the background keeps it. */
  private async ensurePairs(): Promise<void> {
    const [last] = await this.em.execute<unknown[]>(duplicateQueries(this.em).lastRefresh);
    if (!last) await this.refreshPairs(true);
  }

  private pairRows(from: PairCursor | null, limit: number, offset: number): Promise<PairRow[]> {
    return this.em.execute<PairRow[]>(duplicateQueries(this.em).pairs, [...cursorValues(from), limit, offset]);
  }

  private pairRowsBefore(before: PairCursor | null, limit: number): Promise<PairRow[]> {
    return this.em.execute<PairRow[]>(duplicateQueries(this.em).pairsBefore, [...cursorValues(before), limit]);
  }

  private async pairCount(): Promise<number> {
    const [row] = await this.em.execute<{ total: string }[]>(duplicateQueries(this.em).pairCount);
    return Number(row?.total ?? 0);
  }

  /** The pairs with their two contacts, read in one statement. */
  private async withContacts(rows: PairRow[]): Promise<ContactDuplicatePair[]> {
    if (!rows.length) return [];
    const ids = [...new Set(rows.flatMap((row) => [row.a, row.b]))];
    const contacts = await this.em.execute<Contact[]>(duplicateQueries(this.em).contactsById, [`{${ids.join(',')}}`]);
    const byId = new Map(contacts.map((contact) => [contact.id, toContact(contact)]));
    return rows.map((row) => ({
      contacts: [byId.get(row.a)!, byId.get(row.b)!],
      score: roundScore(row.score),
      reasons: row.reasons,
    }));
  }
}

/** Scores are float4 in the database; two decimals are all they mean. */
function roundScore(score: number): number {
  return Math.round(Number(score) * 100) / 100;
}

/** A pair's place in the book's order: its score, then its two ids. */
type PairCursor = [number, string, string];

/** The bind values of a keyset condition `(score, a, b) < (?, ?, ?)` behind `?::real is null or`; nulls for none. */
function cursorValues(cursor: PairCursor | null): (number | string | null)[] {
  return [cursor?.[0] ?? null, cursor?.[0] ?? null, cursor?.[1] ?? null, cursor?.[2] ?? null];
}

function pairCursor(row: PairRow): string {
  return Buffer.from(JSON.stringify([Number(row.score), row.a, row.b])).toString('base64url');
}

function decodePairCursor(cursor: string, argument: 'after' | 'before'): PairCursor {
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw notACursor(argument);
  }
  if (
    !Array.isArray(values) ||
    values.length !== 3 ||
    typeof values[0] !== 'number' ||
    !isUuid(values[1]) ||
    !isUuid(values[2])
  ) {
    throw notACursor(argument);
  }
  return values as PairCursor;
}

/** A contact read as a plain row, with its times as dates. */
export function toContact(row: Contact): Contact {
  return {
    ...row,
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
    deletedAt: row.deletedAt == null ? null : new Date(row.deletedAt),
  };
}

/** `first` of Contact.duplicates, checked. */
export function duplicatesFirst(first: number | undefined | null): number {
  if (first === undefined || first === null) return 10;
  if (!Number.isInteger(first) || first < 1 || first > DUPLICATES_MAX) {
    throw AppError.badInput('first', `must be an integer from 1 to ${DUPLICATES_MAX}`);
  }
  return first;
}
