import type { Config } from '../config.js';
import type { Logger } from '../observability/logger.js';

/**
 * The PostgreSQL connections one process of a part may open at most, by pool: its ORM pool
 * (`DATABASE_POOL_MAX`) and what its runtime adds (`extra`: the job queue's `JOB_POOL_MAX`, the
 * contact exports' copy pool). docs/operations.md ("Connection budget") sums them over every replica.
 */
export function connectionBudget(config: Config, extra: Record<string, number> = {}): Record<string, number> {
  if (!config.env.DATABASE_URL) return {};
  const pools: Record<string, number> = { orm: config.env.DATABASE_POOL_MAX };
  for (const [name, size] of Object.entries(extra)) if (size > 0) pools[name] = size;
  return pools;
}

/** Says at start, in one line, how many PostgreSQL connections this part may open and in which pools. */
export function logConnectionBudget(
  config: Config,
  logger: Logger,
  part: string,
  extra: Record<string, number> = {},
): void {
  const pools = connectionBudget(config, extra);
  const total = Object.values(pools).reduce((sum, size) => sum + size, 0);
  if (!total) {
    logger.info({ part, pools, total }, `${part}: the embedded database, one connection inside this process`);
    return;
  }
  const listed = Object.entries(pools)
    .map(([name, size]) => `${name} ${size}`)
    .join(', ');
  logger.info(
    { part, pools, total },
    `${part} opens at most ${total} PostgreSQL connections (${listed}); every replica counts (docs/operations.md, Connection budget)`,
  );
}
