import { ArgsType, Directive, Field, Int, ObjectType, type ClassType } from 'type-graphql';
import { AppError } from '../errors.js';

/**
 * The two list styles of the platform: GraphQL cursor connections (`first`/`after`,
 * `last`/`before`, opaque keyset cursors: keyset.ts) for frontends, and numbered pages
 * (`page`/`limit`/`total`) over an offset `Window` for the REST adapters' legacy clients. Services
 * take a `Window` and return `{ items, total }` for a page; `toPage` builds the page from that.
 */
export interface Window {
  offset: number;
  limit: number;
}

export interface Slice<T> {
  items: T[];
  total: number;
  /** False when `total` is an estimate (a search with very many matches); exact when absent. */
  totalExact?: boolean;
}

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

@ObjectType({ description: 'Where a page of a cursor connection stands in the whole list' })
@Directive('@shareable')
export class PageInfo {
  @Field(() => Boolean, { description: 'True when items follow this page: ask again with `after: endCursor`' })
  hasNextPage!: boolean;
  @Field(() => Boolean, { description: 'True when items come before this page: ask again with `before: startCursor`' })
  hasPreviousPage!: boolean;
  @Field(() => String, {
    nullable: true,
    description: 'Cursor of the first item of this page; null when the page is empty',
  })
  startCursor!: string | null;
  @Field(() => String, {
    nullable: true,
    description:
      'Cursor of the last item of this page, to pass as `after` for the next page; null when the page is empty',
  })
  endCursor!: string | null;
}

@ArgsType()
export class ConnectionArgs {
  @Field(() => Int, {
    nullable: true,
    description: `Items to return from the start (or after \`after\`), 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}); not with \`last\``,
  })
  first?: number;

  @Field(() => String, { nullable: true, description: 'Cursor of the item after which to start' })
  after?: string;

  @Field(() => Int, {
    nullable: true,
    description: `Items to return from the end (or before \`before\`), 1 to ${MAX_PAGE_SIZE}; not with \`first\``,
  })
  last?: number;

  @Field(() => String, { nullable: true, description: 'Cursor of the item before which to end' })
  before?: string;
}

@ArgsType()
export class PageArgs {
  @Field(() => Int, { nullable: true, description: 'Page number, from 1' })
  page?: number;

  @Field(() => Int, { nullable: true, description: `Page size, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})` })
  limit?: number;
}

/**
 * The one answer to a cursor that names no position of its list: not a cursor at all, another
 * list's, or beyond anything a list holds (which the database would fail on). It is the caller's
 * mistake, named by the argument it came in; every connection, offset or keyset, refuses with this.
 */
export function notACursor(argument: 'after' | 'before' = 'after'): AppError {
  return AppError.badInput(argument, 'is not a cursor of this list');
}

/** The time in a keyset cursor, as `toISOString` writes it for a row: a four-digit year, which PostgreSQL takes. */
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The time a keyset cursor holds (written with `toISOString`), or `notACursor` for any other value. */
export function timeOfCursor(value: unknown): Date {
  const time = typeof value === 'string' && CURSOR_TIME.test(value) ? new Date(value) : undefined;
  // The round trip refuses what the pattern lets through but is no real instant (month 13, year 0).
  if (!time || Number.isNaN(time.getTime()) || time.toISOString() !== value || time.getUTCFullYear() < 1) {
    throw notACursor();
  }
  return time;
}

/** A page size as asked (default when absent), or BAD_USER_INPUT naming `field`; also for lists keyed by something else than offsets. */
export function checkSize(field: string, size: number | undefined | null): number {
  if (size === undefined || size === null) return DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    throw AppError.badInput(field, `must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  }
  return size;
}

export function windowOfPage(args: PageArgs): Window {
  const limit = checkSize('limit', args.limit);
  const page = args.page ?? 1;
  if (!Number.isInteger(page) || page < 1 || page > 1_000_000)
    throw AppError.badInput('page', 'must be an integer of 1 or more');
  return { offset: (page - 1) * limit, limit };
}

export interface Connection<T> {
  edges: { cursor: string; node: T }[];
  nodes: T[];
  pageInfo: PageInfo;
  totalCount: number;
  totalExact: boolean;
}

export interface Page<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
  /** Absent in answers of operations that do not ask for it: then the total is exact. */
  totalExact?: boolean;
}

export function toPage<T>(slice: Slice<T>, window: Window): Page<T> {
  return {
    items: slice.items,
    page: window.offset / window.limit + 1,
    limit: window.limit,
    total: slice.total,
    totalExact: slice.totalExact ?? true,
  };
}

/**
 * A page as a REST list answers it: the items under `data`, then page, limit and total; and
 * `"totalExact": false` only when the total is an estimate, so the legacy body is unchanged otherwise.
 */
export function pageBody<T>(page: Page<T>): {
  data: T[];
  page: number;
  limit: number;
  total: number;
  totalExact?: false;
} {
  const body = { data: page.items, page: page.page, limit: page.limit, total: page.total };
  return page.totalExact === false ? { ...body, totalExact: false } : body;
}

/** `XConnection` and `XEdge` object types for an item type. */
export function ConnectionType<T extends object>(itemType: ClassType<T>, name: string) {
  @ObjectType(`${name}Edge`, { description: `One ${name} item of a connection, with its cursor` })
  class Edge {
    @Field(() => String, {
      description:
        'Opaque key of this item in the list: pass it as `after` to continue after it, or as `before` to page back',
    })
    cursor!: string;
    @Field(() => itemType, { description: 'The item itself' }) node!: T;
  }

  @ObjectType(`${name}Connection`, {
    description: `A page of ${name} items as a cursor connection (\`first\`/\`after\` or \`last\`/\`before\`)`,
  })
  class ConnectionClass implements Connection<T> {
    @Field(() => [Edge], { description: 'The items of this page, each with its cursor' }) edges!: Edge[];
    @Field(() => [itemType], { description: 'The items of this page, without cursors' }) nodes!: T[];
    @Field(() => PageInfo, {
      description: 'Whether more items come before or after this page, and its first and last cursors',
    })
    pageInfo!: PageInfo;
    @Field(() => Int, {
      description: 'How many items the whole list holds, over every page (an estimate when totalExact is false)',
    })
    totalCount!: number;
    @Field(() => Boolean, {
      description:
        'False when totalCount is an estimate: a search with more than 10,000 matches is not counted to the end',
    })
    totalExact!: boolean;
  }
  return ConnectionClass;
}

/** `XPage` object type (page number, size and total) for an item type. */
export function PageType<T extends object>(itemType: ClassType<T>, name: string) {
  @ObjectType(`${name}Page`, {
    description: `A numbered page of ${name} items (\`page\`/\`limit\`), as the REST lists answer`,
  })
  class PageClass implements Page<T> {
    @Field(() => [itemType], { description: 'The items of this page' }) items!: T[];
    @Field(() => Int, { description: 'Number of this page, from 1' }) page!: number;
    @Field(() => Int, { description: 'Page size asked for (the last page may hold fewer items)' }) limit!: number;
    @Field(() => Int, {
      description: 'How many items the whole list holds, over every page (an estimate when totalExact is false)',
    })
    total!: number;
    @Field(() => Boolean, {
      description: 'False when total is an estimate: a search with more than 10,000 matches is not counted to the end',
    })
    totalExact!: boolean;
  }
  return PageClass;
}
