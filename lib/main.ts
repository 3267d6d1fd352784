import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { serveMetrics } from './metrics.js';
import { DRAIN_TIMEOUT_MS } from './shutdown.js';
import { startTracing } from './tracing.js';

/** The longest a stop may take: the drain, plus closing databases and queues. */
const SHUTDOWN_DEADLINE_MS = DRAIN_TIMEOUT_MS + 5_000;

/**
 * The life of a long-running entry point (`npm start`, `npm run worker`, one part of the platform):
 * configuration validated first (a bad value: every problem named, exit 1), then `start`, then a
 * clean stop on SIGINT or SIGTERM (exit 0) or a failed one (exit 1).
 */
export async function runMain(
  name: string,
  start: (config: Config, logger: Logger) => Promise<{ close(): Promise<void> }>,
): Promise<void> {
  const config = configOrExit();
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
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
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
  } catch (error) {
    logger.error({ err: error }, `${name} could not start`);
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
    logger.error({ err: error }, `${name} failed`);
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
