import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { loadConfig } from '#lib/config.js';
import { connectionBudget, logConnectionBudget } from '#lib/data/connection-budget.js';
import { jobQueueConnections } from '#lib/data/job-queue.js';
import { LogCollector } from '#test/support/logs.js';

describe('the connection budget each part states at start', () => {
  const onPostgres = loadConfig({
    DATABASE_URL: 'postgres://db.example/platform',
    DATABASE_POOL_MAX: '3',
    JOB_POOL_MAX: '2',
  });

  it('counts the ORM pool and the runtime pools in one line', () => {
    const sink = new LogCollector();
    logConnectionBudget(onPostgres, pino(sink), 'contacts-subgraph', {
      queue: jobQueueConnections(onPostgres),
      exports: 2,
    });
    expect(sink.lines).toHaveLength(1);
    expect(sink.lines[0]).toMatchObject({
      part: 'contacts-subgraph',
      pools: { orm: 3, queue: 2, exports: 2 },
      total: 7,
      msg: expect.stringContaining(
        'contacts-subgraph opens at most 7 PostgreSQL connections (orm 3, queue 2, exports 2)',
      ),
    });
  });

  it('opens no PostgreSQL connection on the embedded database, and says so', () => {
    const embedded = loadConfig({});
    expect(jobQueueConnections(embedded)).toBe(0);
    expect(connectionBudget(embedded, { queue: 0 })).toEqual({});
    const sink = new LogCollector();
    logConnectionBudget(embedded, pino(sink), 'social-subgraph', { queue: 0 });
    expect(sink.lines[0]).toMatchObject({ total: 0, msg: expect.stringContaining('embedded database') });
    // The defaults: 10 for the ORM, 4 for a queue.
    expect(connectionBudget(loadConfig({ DATABASE_URL: 'postgres://db.example/p' }), { queue: 4 })).toEqual({
      orm: 10,
      queue: 4,
    });
  });
});
