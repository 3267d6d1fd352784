import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FormattedExecutionResult } from 'graphql';
import { loadConfig, type Config } from '#lib/config.js';
import { Identity } from '#lib/identity.js';
import { createLogger } from '#lib/observability/logger.js';
import type { Deps } from '#lib/service.js';
import type { RunningSubgraph } from '#lib/subgraph/subgraph.js';
import { createTestDatabase, type TestDatabase } from './platform.js';

/** One subgraph started alone on a free port (no gateway, no REST), on a database of the suite's own. */
export interface TestSubgraph<Runtime> {
  subgraph: RunningSubgraph<Runtime>;
  config: Config;
  deps: Deps;
  /** Bearer headers for a token of the development issuer. */
  bearer(sub: string, scopes?: string[], email?: string, expiresIn?: string): Promise<Record<string, string>>;
  /** Runs an operation in process as the gateway does; throws on errors unless `errors` is asked for. */
  run<Data = any>(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<Data>;
  /** Another instance of the same subgraph on the same database (a second process, as far as the database knows). */
  another(): Promise<RunningSubgraph<Runtime>>;
  stop(): Promise<void>;
}

export async function startTestSubgraph<Runtime>(
  start: (deps: Deps, options: { port: number; onQuery?: (sql: string) => void }) => Promise<RunningSubgraph<Runtime>>,
  options: { embedded?: boolean; env?: Record<string, string>; onQuery?: (sql: string) => void } = {},
): Promise<TestSubgraph<Runtime>> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'subgraph-test-'));
  const database: TestDatabase = await createTestDatabase({ embedded: options.embedded });
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...options.env,
  });
  const deps: Deps = { config, logger: createLogger(config), identity: await Identity.create(config) };
  // Statements are watched on the first instance only: a test counts what one request costs there.
  const subgraph = await start(deps, { port: 0, onQuery: options.onQuery });
  const others: RunningSubgraph<Runtime>[] = [];
  return {
    subgraph,
    config,
    deps,
    bearer: async (sub, scopes, email, expiresIn) => ({
      authorization: `Bearer ${await deps.identity.sign({ sub, scopes, email }, expiresIn)}`,
    }),
    async run(query, variables = {}, headers = {}) {
      const answer: FormattedExecutionResult = await subgraph.local.execute({ query, variables }, { headers });
      if (answer.errors?.length) throw new Error(JSON.stringify(answer.errors));
      return answer.data as never;
    },
    async another() {
      const other = await start(deps, { port: 0 });
      others.push(other);
      return other;
    },
    async stop() {
      for (const other of others) await other.close();
      await subgraph.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Takes results from a subscription one at a time, each within `timeoutMs`. */
export function reader(stream: AsyncIterator<FormattedExecutionResult>, timeoutMs = 5000) {
  let pending: Promise<IteratorResult<FormattedExecutionResult>> | undefined;
  const within = async <T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
    try {
      return await Promise.race([promise, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    async next(): Promise<FormattedExecutionResult | 'ended'> {
      pending ??= stream.next();
      const result = await within(pending, timeoutMs);
      if (result === 'timeout') throw new Error(`no result within ${timeoutMs} ms`);
      pending = undefined;
      return result.done ? 'ended' : result.value;
    },
    /** True when nothing comes within `ms` (the stream stays open and keeps what comes later). */
    async quietFor(ms: number): Promise<boolean> {
      pending ??= stream.next();
      return (await within(pending, ms)) === 'timeout';
    },
  };
}
