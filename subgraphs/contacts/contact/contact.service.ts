import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import { LRUCache } from 'lru-cache';
import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import { isUuid } from '#lib/ids.js';
import {
  byCreation,
  emptyConnection,
  keysetConnection,
  keysetSql,
  keysetWindow,
  orderByText,
  type KeysetArgs,
  type KeysetConnection,
  type KeysetWindow,
} from '#lib/data/keyset.js';
import type { Connection, Slice, Window } from '#lib/data/pagination.js';
import { checkVersion } from '#lib/data/versions.js';
import { Contact } from './contact.entity.js';
import { contactQueries, insertValues, updateValues } from './contact.queries.js';
import { ContactEventType } from './contact-event.entity.js';
import { recordContactEvent } from './contact-event.service.js';
import {
  EDITABLE_FIELDS,
  hasIdentity,
  SCROLL_MAX,
  type CreateContactInput,
  type UpdateContactInput,
} from './contact.input.js';

/**
 * Up to this many matches a search's total is exact; past it (or when PostgreSQL's planner expects
 * more), an estimate flagged `totalExact: false` (migration ContactSearchTotal).
 */
export const EXACT_COUNT_LIMIT = 10_000;

/** Newest first, on the index (created_at desc, id desc) of live contacts. */
export const NEWEST_FIRST = byCreation<Contact>('c', 'desc');

/**
 * PostgreSQL's estimates of searches' matches, by the text searched for, shared by one process's requests
 * (migration ContactSearchEstimate): the next page of a search, or the same search again within a
 * minute, is not planned again just to choose between counting and estimating. The planner's own
 * estimate moves only when ANALYZE runs.
 */
export type SearchEstimates = LRUCache<string, number>;

/** Distinct searches a process remembers the estimate of, the least recently used forgotten first. */
const REMEMBERED_SEARCHES = 1_000;
const ESTIMATE_LIFETIME_MS = 60_000;

export function createSearchEstimates(): SearchEstimates {
  return new LRUCache({ max: REMEMBERED_SEARCHES, ttl: ESTIMATE_LIFETIME_MS });
}

/**
 * A search as its statements take it (`contact_search_query`, migration ContactSearchQuery): what a
 * person types as a prefix query over the search vector ("jan smi" finds "Jane Smith"), and the text as
 * typed, which PostgreSQL's parser reads the way it read the stored contacts (`ACME-2024`, `3.14`).
 */
export interface ContactSearch {
  words: string;
  text: string;
}

/** The search of `search`, or null when it holds no letter or digit (it matches nothing). */
export function contactSearchOf(search: string): ContactSearch | null {
  const words = toPrefixQuery(search);
  return words === null ? null : { words, text: search };
}

/** The statement parameters of a search, in the order `contact_search_query` takes them. */
export function searchParameters(search: ContactSearch): string[] {
  return [search.words, search.text];
}

/** Only letters and digits survive, so the text can never break the tsquery syntax. */
function toPrefixQuery(search: string): string | null {
  const words = search
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .slice(0, 8);
  return words.length ? words.map((word) => `${word}:*`).join(' & ') : null;
}

/** The rules of contact records: who may exist, how they are found, and how they leave. */
export class ContactService {
  constructor(
    private readonly em: EntityManager,
    private readonly searchEstimates: SearchEstimates,
  ) {}

  /** Live contacts (matching `search` when given), newest first, as a keyset connection with their total. */
  async connection(args: KeysetArgs, search?: string | null): Promise<Connection<Contact>> {
    const window = keysetWindow(NEWEST_FIRST, args);
    const query = search ? contactSearchOf(search) : undefined;
    if (query === null) return emptyConnection();
    const [rows, total] = await Promise.all([
      this.keysetRows(window, query),
      query ? this.countMatches(query) : this.countLive(),
    ]);
    return {
      ...keysetConnection(NEWEST_FIRST, window, rows),
      totalCount: total.total,
      totalExact: total.totalExact ?? true,
    };
  }

  /**
   * One keyset page as plain rows (a list changes nothing, so managed entities would only cost
   * snapshots), in fixed SQL text per shape of page (see contact.queries.ts).
   */
  private async keysetRows(window: KeysetWindow, query: ContactSearch | undefined): Promise<Contact[]> {
    const queries = contactQueries(this.em);
    const page = keysetSql(NEWEST_FIRST, window);
    const conditions = [
      ...(query ? [{ sql: queries.matches, params: searchParameters(query) }] : []),
      ...page.conditions,
    ];
    const text = `${queries.live}${conditions.map((condition) => ` and ${condition.sql}`).join('')} order by ${orderByText(page)} limit ?`;
    const rows = await this.em.execute<Contact[]>(text, [
      ...conditions.flatMap((condition) => condition.params),
      page.limit,
    ]);
    return rows.map(toContactRow);
  }

  /** Live contacts newest first, a numbered page (the REST list). */
  async list(window: Window, search?: string | null): Promise<Slice<Contact>> {
    const query = search ? contactSearchOf(search) : undefined;
    if (query === null) return { items: [], total: 0 };
    const sql = contactQueries(this.em);
    // The page and its total at once, as plain rows: a list changes nothing, so managed entities
    // would only cost snapshots.
    const [rows, total] = await Promise.all([
      query
        ? this.em.execute<Contact[]>(sql.searchPage, [...searchParameters(query), window.limit, window.offset])
        : this.em.execute<Contact[]>(sql.page, [window.limit, window.offset]),
      query ? this.countMatches(query) : this.countLive(),
    ]);
    return { items: rows.map(toContactRow), ...total };
  }

  /** Every live contact, exactly, from the row the triggers keep (migration ContactCount). */
  private async countLive(): Promise<Pick<Slice<Contact>, 'total' | 'totalExact'>> {
    const [row] = await this.em.execute<{ total: string }[]>(contactQueries(this.em).liveTotal);
    return { total: Number(row?.total ?? 0), totalExact: true };
  }

  /**
   * The matches of a search, in one statement (migration ContactSearchTotal): counted exactly up to
   * EXACT_COUNT_LIMIT, or PostgreSQL's estimate, flagged, when its planner expects more or the count
   * passes the limit. Counting every match of a common word in a million contacts would cost more
   * than the page itself, on every page. The estimate, once known, is handed back on the next call.
   */
  private async countMatches(query: ContactSearch): Promise<Pick<Slice<Contact>, 'total' | 'totalExact'>> {
    // By the text as typed: it decides both ways of making the query.
    const known = this.searchEstimates.get(query.text) ?? null;
    const [row] = await this.em.execute<{ total: string; exact: boolean; estimate: string | null }[]>(
      contactQueries(this.em).searchTotal,
      [...searchParameters(query), EXACT_COUNT_LIMIT, known],
    );
    if (known === null && row?.estimate != null) this.searchEstimates.set(query.text, Number(row.estimate));
    return { total: Number(row?.total ?? 0), totalExact: row?.exact ?? true };
  }

  /**
   * A live contact to show, or a merged one (which says where it went), as a plain row (null for an unknown, malformed or otherwise deleted id): a read
   * changes nothing, so it skips the query builder, the identity map and the change-tracking snapshot.
   */
  async read(id: string): Promise<Contact | null> {
    if (!isUuid(id)) return null;
    const row: Contact | undefined = await this.em.execute<Contact>(contactQueries(this.em).byId, [id], 'get');
    return row ? toContactRow(row) : null;
  }

  /** A live contact to change, managed by the entity manager, or null for an unknown, malformed or deleted id. */
  async find(id: string): Promise<Contact | null> {
    if (!isUuid(id)) return null;
    return this.em.findOne(Contact, { id, deleted: false });
  }

  /**
   * The same keyset walk in pages of up to SCROLL_MAX and without a total, for exports: counting
   * would cost each page a scan, and a thousand rows a page keep a large export to few round trips.
   */
  async scroll(args: KeysetArgs, search?: string | null): Promise<KeysetConnection<Contact>> {
    const window = keysetWindow(NEWEST_FIRST, args, { maxSize: SCROLL_MAX });
    const query = search ? contactSearchOf(search) : undefined;
    if (query === null) return keysetConnection(NEWEST_FIRST, window, []);
    return keysetConnection(NEWEST_FIRST, window, await this.keysetRows(window, query));
  }

  async findMany(ids: readonly string[]): Promise<Map<string, Contact>> {
    const valid = ids.filter(isUuid);
    const found = valid.length ? await this.em.find(Contact, { id: { $in: valid }, deleted: false }) : [];
    return new Map(found.map((contact) => [contact.id, contact]));
  }

  async get(id: string): Promise<Contact> {
    const contact = await this.find(id);
    if (!contact) throw AppError.notFound('Contact');
    return contact;
  }

  /**
   * One INSERT: every value is known before it is written (the id and times are made here, the version
   * starts at 1), so the unit of work's transaction around a single statement would only add two round
   * trips.
   */
  async create(input: CreateContactInput): Promise<Contact> {
    const contact = new Contact();
    this.apply(contact, input);
    this.requireIdentity(contact);
    await this.flushUnique(() => this.em.execute(contactQueries(this.em).insert, insertValues(contact), 'run'));
    return contact;
  }

  /**
   * Changes a live contact; with `ifVersion`, only while it is still at that version (lib/data/versions.ts).
   * The change is first tried as one conditional UPDATE, which PostgreSQL applies to the row under its
   * lock: a write that passes every rule costs one round trip. When it changes nothing, the row is read
   * under `FOR UPDATE` in a transaction, which says why (unknown, deleted, another version, no identity
   * left) or, if the row moved on in between, makes the change after all.
   */
  async update(id: string, input: UpdateContactInput, ifVersion?: number | null): Promise<Contact> {
    if (isUuid(id)) {
      const changes: Partial<Contact> = {};
      this.apply(changes, input);
      const [changed] = await this.flushUnique(() =>
        this.em.execute<Contact[]>(contactQueries(this.em).update, updateValues(id, changes, ifVersion)),
      );
      if (changed) return toContactRow(changed);
    }
    return this.flushUnique(() =>
      this.em.transactional(async (tx) => {
        const contact = await this.locked(tx, id, ifVersion);
        this.apply(contact, input);
        this.requireIdentity(contact);
        recordContactEvent(tx, contact.id, ContactEventType.UPDATED);
        return contact;
      }),
    );
  }

  async softDelete(id: string, ifVersion?: number | null): Promise<Contact> {
    return this.em.transactional(async (tx) => {
      const contact = await this.locked(tx, id, ifVersion);
      contact.deleted = true;
      contact.deletedAt = new Date();
      recordContactEvent(tx, contact.id, ContactEventType.DELETED);
      return contact;
    });
  }

  /**
   * A live contact, row-locked for the rest of the transaction, so that the version check and the
   * write cannot be split by another writer: two holding the same version take turns, and the
   * second finds it moved on.
   */
  private async locked(tx: EntityManager, id: string, ifVersion: number | null | undefined): Promise<Contact> {
    const contact = isUuid(id)
      ? await tx.findOne(Contact, { id, deleted: false }, { lockMode: LockMode.PESSIMISTIC_WRITE })
      : null;
    if (!contact) throw AppError.notFound('Contact');
    checkVersion(contact.version, ifVersion);
    return contact;
  }

  /** Sets the given fields (undefined: unchanged; null or blank: cleared). */
  apply(contact: Partial<Contact>, input: UpdateContactInput): void {
    for (const field of EDITABLE_FIELDS) {
      const value = input[field];
      if (value === undefined) continue;
      if (field === 'tags') contact.tags = normalizeTags(value as string[] | null);
      else contact[field] = typeof value === 'string' ? value.trim() || null : null;
    }
  }

  requireIdentity(contact: Contact): void {
    if (!hasIdentity(contact)) {
      throw new AppError(ErrorCode.BAD_USER_INPUT, 'A contact needs a firstName or an email', {
        fields: [
          { field: 'firstName', message: 'firstName or email is required' },
          { field: 'email', message: 'firstName or email is required' },
        ],
      });
    }
  }

  private async flushUnique<T>(flush: () => Promise<T>): Promise<T> {
    try {
      return await flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) {
        throw new AppError(ErrorCode.CONFLICT, 'Another contact already has this e-mail address', {
          fields: [{ field: 'email', message: 'is already used by another contact' }],
        });
      }
      throw error;
    }
  }
}

/** A contact read as a plain row, with its times as dates (what the GraphQL type serializes). */
function toContactRow(row: Contact): Contact {
  return {
    ...row,
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
    deletedAt: row.deletedAt === null || row.deletedAt === undefined ? null : new Date(row.deletedAt),
  };
}

function normalizeTags(tags: string[] | null): string[] {
  return [...new Set((tags ?? []).map((tag) => tag.trim()).filter(Boolean))];
}
