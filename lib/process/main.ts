import cluster from 'node:cluster';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { DataDirInUseError } from '../data/data-dir-lock.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { serveMetrics } from '../http/metrics-server.js';
import { DRAIN_TIMEOUT_MS } from '../http/shutdown.js';
import { startTracing } from '../observability/tracing.js';

/** The longest a stop may take: the drain, plus closing databases and queues. */
const SHUTDOWN_DEADLINE_MS = DRAIN_TIMEOUT_MS + 5_000;

/** Every signal that stops whoever started the process (a supervisor, npm, a closing terminal) stops it too, drained. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** How often the process looks whether the one that started it is still there. */
const PARENT_CHECK_MS = 1000;

/**
 * Calls `stop` once the process that started this one is gone (this one is handed to another parent).
 * npm runs a script under `sh -c`, and forwards SIGTERM and SIGINT to that shell only: the shell dies and
 * leaves the platform running, holding every port. npm does not forward SIGHUP at all. Noticing the lost
 * parent is what covers all of these, whatever sits between the supervisor and this process.
 */
export function onParentGone(stop: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    stop();
  }, PARENT_CHECK_MS);
  timer.unref();
}

export interface MainOptions {
  /**
   * Why this entry point cannot run with `config`, as the one line to print (undefined: it can); asked
   * before anything starts, so a refusal is that line alone, not the errors of parts started meanwhile.
   */
  refuse?: (config: Config) => string | undefined;
}

/**
 * The life of a long-running entry point (`npm start`, `npm run worker`, one part of the platform):
 * configuration validated first (a bad value: every problem named, exit 1), then `start`, then a
 * clean stop on SIGINT, SIGTERM or SIGHUP, or when the process that started it is gone (exit 0), or
 * a failed one (exit 1).
 */
export async function runMain(
  name: string,
  start: (config: Config, logger: Logger) => Promise<{ close(): Promise<void> }>,
  options: MainOptions = {},
): Promise<void> {
  const config = configOrExit();
  const refusal = options.refuse?.(config);
  if (refusal) {
    console.error(refusal);
    process.exit(1);
  }
  const logger = createLogger(config);
  for (const warning of config.warnings) logger.warn(warning);
  let running: { close(): Promise<void> } | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // Still starting (e.g. waiting for the database): nothing was served yet, so nothing is lost.
    if (!running) process.exit(0);
    // Each server drains for DRAIN_TIMEOUT_MS at most; whatever else hangs does not keep the process.
    setTimeout(() => {
      logger.error(`shutdown took longer than ${SHUTDOWN_DEADLINE_MS} ms; exiting`);
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    try {
      await running.close();
      logger.info('stopped cleanly');
      // The log is written asynchronously: its last lines reach stdout before the process ends, not after.
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  for (const signal of STOP_SIGNALS) process.on(signal, () => void stop(signal));
  // A cluster worker's parent is the primary, which stops its workers itself (lib/process/workers.ts); a
  // primary that is gone without doing so (killed) would leave node:cluster to end the worker at once,
  // cutting its requests mid-answer. Saying the disconnect is expected lets the worker drain instead.
  if (cluster.worker) {
    const worker = cluster.worker;
    worker.once('disconnect', () => {
      worker.exitedAfterDisconnect = true;
      void stop('primary process gone');
    });
  } else onParentGone(() => void stop('parent process gone'));
  try {
    // Tracing first, so every span of the start and after has somewhere to go; metrics beside the part.
    const tracing = await startTracing(config, logger, serviceNameOf(name));
    const metrics = await serveMetrics(config, logger);
    if (metrics) logger.info({ url: metrics.url }, 'metrics served');
    const started = await start(config, logger);
    running = {
      close: async () => {
        await started.close();
        await metrics?.close();
        await tracing?.close();
      },
    };
    // From here a stop drains what is served (before, it had nothing to drain).
    logger.info('serving');
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) logger.error({ err: error }, `${name} could not start`);
    console.error(`${name} could not start:`, error instanceof Error ? error.message : error);
    process.exit(1);
  }
}

/**
 * A command that does one job and ends (`npm run migrate`): exit 0 when `task` is done, 1 when the
 * configuration is bad or the task fails.
 */
export async function runTask(name: string, task: (config: Config, logger: Logger) => Promise<void>): Promise<void> {
  const config = configOrExit();
  const logger = createLogger(config);
  try {
    await task(config, logger);
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) logger.error({ err: error }, `${name} failed`);
    console.error(`${name} failed:`, error instanceof Error ? error.message : error);
    process.exit(1);
  }
  logger.flush();
  process.exit(0);
}

/** `OTEL_SERVICE_NAME`'s default: the part's name (`gateway`, `social-rest`), or `platform` for `npm start`. */
function serviceNameOf(name: string): string {
  return /^[a-z-]+$/.test(name) ? name : name === 'The publisher worker' ? 'publisher-worker' : 'platform';
}

/** The configuration, or every problem named on stderr and exit code 1. */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  }
}
