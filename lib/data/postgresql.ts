import { isRaw, JsonProperty, Utils, type Configuration, type LoggingOptions, type Transaction } from '@mikro-orm/core';
import { PostgreSqlConnection, PostgreSqlDriver } from '@mikro-orm/postgresql';
import type { AbstractSqlPlatform } from '@mikro-orm/sql';
import pg from 'pg';

/**
 * MikroORM 7 writes every value into the SQL text before it sends it (`Platform.formatQuery`,
 * called from `AbstractSqlConnection.execute`), so PostgreSQL sees each statement as new text and
 * plans it afresh, and the values cross the wire as quoted literals. Here the same statements go
 * out with bind parameters (`$1`, `$2`...), and `PreparingClient` makes each distinct text a named
 * prepared statement on its connection: parsed once, its plan cached by PostgreSQL.
 *
 * The placeholders are MikroORM's own: `?` a value, `??` an identifier (inlined, quoted), `\?` a
 * literal question mark (the jsonb operators); an array value is a list (`in (?)`), as in
 * `formatQuery`; a raw fragment given as a value is compiled in place with its own values.
 */
export function bindParameters(
  platform: AbstractSqlPlatform,
  sql: string,
  params: readonly unknown[],
): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  return { text: compile(platform, sql, params, values), values };
}

function compile(platform: AbstractSqlPlatform, sql: string, params: readonly unknown[], values: unknown[]): string {
  // formatQuery leaves a statement without values untouched (`\?` included); so does this.
  if (params.length === 0) return sql;
  let text = '';
  let position = 0;
  let next = 0;
  for (;;) {
    const at = sql.indexOf('?', position);
    if (at === -1) return text + sql.slice(position);
    if (at > 0 && sql[at - 1] === '\\') {
      text += `${sql.slice(position, at - 1)}?`;
      position = at + 1;
    } else if (sql[at + 1] === '?') {
      text += sql.slice(position, at) + platform.quoteIdentifier(params[next++] as string);
      position = at + 2;
    } else {
      text += sql.slice(position, at) + placeholder(platform, params[next++], values);
      position = at + 1;
    }
  }
}

function placeholder(platform: AbstractSqlPlatform, value: unknown, values: unknown[]): string {
  if (isRaw(value)) return compile(platform, value.sql, value.params, values);
  if (Array.isArray(value) && !(JsonProperty in value))
    return value.map((item) => placeholder(platform, item, values)).join(', ');
  values.push(bindValue(platform, value));
  return `$${values.length}`;
}

/** A value as `quoteValue` would write it, but as a parameter: dates in the ORM's format, JSON as text. */
function bindValue(platform: AbstractSqlPlatform, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (Utils.isPlainObject(value) || (typeof value === 'object' && JsonProperty in value)) return JSON.stringify(value);
  // PostgreSQL's platform formats dates (UTC with forceUtcTimezone); the method is internal in its typings.
  if (value instanceof Date) return (platform as unknown as { formatDate(date: Date): string }).formatDate(value);
  if (ArrayBuffer.isView(value)) return value;
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/** `AbstractSqlConnection.execute` with bind parameters instead of values in the text. */
class BoundPostgreSqlConnection extends PostgreSqlConnection {
  override async execute<T>(
    query: Parameters<PostgreSqlConnection['execute']>[0],
    params: readonly unknown[] | Record<string, unknown> = [],
    method: 'all' | 'get' | 'run' = 'all',
    ctx?: Transaction,
    loggerContext?: LoggingOptions,
  ): Promise<T> {
    await this.ensureConnection();
    // prepareQuery (private in the typings) resolves query builders, raw fragments and named
    // parameters to `?` text and a value list, runs the onQuery hook, and formats the logged text.
    const prepared = (
      this as unknown as {
        prepareQuery(query: unknown, params: unknown): { query: string; params: unknown[]; formatted: string };
      }
    ).prepareQuery(query, params);
    const { text, values } = bindParameters(this.platform, prepared.query, prepared.params);
    const { signal, inflightQueryAbortStrategy, ...logContext } = (loggerContext ?? {}) as LoggingOptions & {
      signal?: unknown;
      inflightQueryAbortStrategy?: unknown;
    };
    const abort =
      signal === undefined && inflightQueryAbortStrategy === undefined
        ? undefined
        : { signal, inflightQueryAbortStrategy };
    const compiled = {
      sql: text,
      parameters: values,
      query: { kind: 'RawNode', sqlFragments: [text], parameters: [] },
    };
    const client = (ctx ?? this.getClient()) as unknown as {
      executeQuery(query: unknown, abort: unknown): Promise<unknown>;
    };
    return this.executeQuery(
      this.getSql(prepared.query, prepared.formatted, logContext),
      async () => this.transformRawResult<T>(await client.executeQuery(compiled, abort), method),
      { ...prepared, ...logContext },
    );
  }
}

/** The PostgreSQL driver of MikroORM, sending its statements through `BoundPostgreSqlConnection`. */
export class BoundPostgreSqlDriver extends PostgreSqlDriver {
  constructor(config: Configuration) {
    super(config);
    const self = this as unknown as { connection: PostgreSqlConnection; replicas: PostgreSqlConnection[] };
    self.connection = new BoundPostgreSqlConnection(this.config);
    self.replicas = this.createReplicas((replica) => new BoundPostgreSqlConnection(this.config, replica, 'read'));
  }
}

/** Past this many distinct statement texts, further ones run unnamed (an unusual program could otherwise grow the map without end). */
const MAX_NAMED_STATEMENTS = 2000;
const statementNames = new Map<string, string>();

function statementName(text: string): string | undefined {
  let name = statementNames.get(text);
  if (!name && statementNames.size < MAX_NAMED_STATEMENTS) {
    name = `orm_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * A `pg` client that prepares every statement with values as a named statement (one per distinct
 * text, on each connection once): PostgreSQL then skips parsing it again and, after a few runs,
 * may keep its generic plan. Statements without values (transaction control) run as before.
 */
export class PreparingClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    const query = this.query.bind(this) as (...args: unknown[]) => unknown;
    this.query = ((text: unknown, values?: unknown, ...rest: unknown[]) => {
      const name =
        typeof text === 'string' && Array.isArray(values) && values.length > 0 && rest.length === 0
          ? statementName(text)
          : undefined;
      return name ? sendNamed(query, name, text as string, values as unknown[]) : query(text, values, ...rest);
    }) as pg.Client['query'];
  }
}

/**
 * Sends a named statement as a `pg.Query`. Given as `{ name, text, values }`, pg copies the object
 * through its property descriptors before reading it (`normalizeQueryConfig`), which cost a twentieth
 * of the CPU of a read by id; from the text and the values it builds the query directly, and the name
 * is read only when the query is sent.
 */
function sendNamed(
  send: (query: pg.Query) => unknown,
  name: string,
  text: string,
  values: unknown[],
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const query = new pg.Query(text, values, (error: Error | undefined, result: unknown) =>
      error ? reject(error) : resolve(result),
    );
    (query as pg.Query & { name: string }).name = name;
    send(query);
  });
}
