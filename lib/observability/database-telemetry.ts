import type { MikroORM } from '@mikro-orm/sql';
import type { Pool } from 'pg';
import { dbPoolConnections, dbQueryDuration } from './metrics.js';
import { inChildSpan, tracingOn } from './tracing.js';

/** What MikroORM passes with a statement (its `LogContext`): the SQL with placeholders, before values are inlined. */
interface StatementContext {
  query?: unknown;
}

type ExecuteQuery = <T>(query: string, run: () => Promise<T>, statement?: StatementContext) => Promise<T>;

const STATEMENT_KINDS = new Set(['select', 'insert', 'update', 'delete', 'with']);

function statementKind(sql: string): string {
  const word = /^\s*(\w+)/.exec(sql)?.[1]?.toLowerCase() ?? '';
  return STATEMENT_KINDS.has(word) ? (word === 'with' ? 'select' : word) : 'other';
}

/**
 * Times every SQL statement of a service (histogram `db_query_duration_seconds`) and, while
 * tracing is on, gives each one a span under the resolver that issued it. MikroORM funnels every
 * statement of the entity manager through its connection's `executeQuery`, which is wrapped here
 * once per ORM; the span carries the SQL with its placeholders, never the values.
 * On PostgreSQL the pool's connections are read at every scrape (`db_pool_connections`), until the ORM closes.
 */
export function observeDatabase(orm: MikroORM, service: string, pooled: boolean): void {
  const connection = orm.driver.getConnection() as unknown as { executeQuery: ExecuteQuery };
  const execute: ExecuteQuery = connection.executeQuery.bind(connection);
  connection.executeQuery = async <T>(
    query: string,
    run: () => Promise<T>,
    statement?: StatementContext,
  ): Promise<T> => {
    const sql = typeof statement?.query === 'string' ? statement.query : query;
    const kind = statementKind(sql);
    const stop = dbQueryDuration.startTimer({ service, statement: kind });
    const timed = async () => {
      try {
        const result = await execute(query, run, statement);
        stop({ outcome: 'ok' });
        return result;
      } catch (error) {
        stop({ outcome: 'error' });
        throw error;
      }
    };
    if (!tracingOn()) return timed();
    return inChildSpan(
      `${kind.toUpperCase()} ${service}`,
      { 'db.system.name': 'postgresql', 'db.namespace': service, 'db.operation.name': kind, 'db.query.text': sql },
      timed,
    );
  };

  if (!pooled) return;
  const native = orm.driver.getConnection() as unknown as { getNativeClient(): Promise<Pool> };
  const max = orm.config.get('pool')?.max;
  const stopReading = dbPoolConnections.readOnScrape(async (gauge) => {
    const pool = await native.getNativeClient();
    gauge.set({ service, state: 'total' }, pool.totalCount);
    gauge.set({ service, state: 'idle' }, pool.idleCount);
    gauge.set({ service, state: 'waiting' }, pool.waitingCount);
    if (max !== undefined) gauge.set({ service, state: 'max' }, max);
  });
  // Reading a closed pool would open it again: stop first.
  const close = orm.close.bind(orm);
  orm.close = async (force?: boolean) => {
    stopReading();
    for (const state of ['total', 'idle', 'waiting', 'max']) dbPoolConnections.gauge.remove({ service, state });
    return close(force);
  };
}
