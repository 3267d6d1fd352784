import cluster from 'node:cluster';
import { RateLimiterClusterMaster } from 'rate-limiter-flexible';
import type { Config } from '../config.js';
import type { Logger } from '../observability/logger.js';
import { onParentGone, STOP_SIGNALS } from './main.js';
import { serveMetrics } from '../http/metrics-server.js';

/** Set in each worker's environment: its number, from 1. Worker 1 alone prints the URLs. */
export const WORKER_NUMBER = 'PLATFORM_WORKER_NUMBER';

/**
 * The primary process of `npm start` on PostgreSQL: forks `config.workers` workers (node:cluster),
 * each running the whole platform on the same ports (the primary accepts the connections and hands
 * them round in turn). It serves nothing itself; it holds the rate-limit counts every worker
 * consumes over IPC (`RateLimiterClusterMaster`), so a limit is one limit for the whole `npm start`.
 * Only the first worker publishes (the others start with PUBLISH_WORKER=off). SIGINT, SIGTERM or
 * SIGHUP, or the process that started the primary being gone, stops every worker (each drains its requests) and then the primary, with exit code 0; a worker
 * that stops on its own stops the rest, with exit code 1, for the supervisor to restart. The
 * primary serves `METRICS_PORT`: every worker's metrics, aggregated (lib/observability/metrics.ts).
 */
export async function runWorkers(config: Config, logger: Logger): Promise<void> {
  new RateLimiterClusterMaster();
  const log = logger.child({ component: 'primary' });
  let exitCode: number | undefined;
  const stop = (code: number) => {
    if (exitCode !== undefined) return;
    exitCode = code;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  cluster.on('exit', (worker, code, signal) => {
    if (exitCode === undefined) {
      log.error({ pid: worker.process.pid, code, signal }, 'a worker stopped; stopping the others');
      stop(1);
    }
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
  });
  for (const signal of STOP_SIGNALS) process.on(signal, () => stop(0));
  onParentGone(() => stop(0));
  for (let number = 1; number <= config.workers; number++) {
    cluster.fork({ [WORKER_NUMBER]: String(number), ...(number > 1 ? { PUBLISH_WORKER: 'off' } : {}) });
  }
  log.info({ workers: config.workers }, 'workers started');
  await serveMetrics(config, logger);
}
