import type { Config } from '../config.js';
import { isDatabaseUnavailable } from '../http/availability.js';
import type { Logger } from '../observability/logger.js';

/** First wait between tries, doubled after each failed one up to the longest. */
const FIRST_DELAY_MS = 500;
const LONGEST_DELAY_MS = 10_000;

/**
 * Runs `open` (connect and migrate) until the database answers: a start while PostgreSQL is down,
 * still starting or unreachable is tried again with backoff, each try logged, for up to
 * `DATABASE_CONNECT_TIMEOUT` seconds (0: for ever, as container platforms expect; they restart a
 * part that fails its liveness probe, not one that waits). Any other failure (a bad migration, bad
 * credentials) ends the start at once.
 */
export async function untilDatabaseAnswers<T>(config: Config, log: Logger, open: () => Promise<T>): Promise<T> {
  const timeoutMs = config.env.DATABASE_CONNECT_TIMEOUT * 1000;
  const started = Date.now();
  for (let attempt = 1, delay = FIRST_DELAY_MS; ; attempt++, delay = Math.min(delay * 2, LONGEST_DELAY_MS)) {
    try {
      const opened = await open();
      if (attempt > 1) log.info({ attempt }, 'database answers: started');
      return opened;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      const waited = Date.now() - started;
      if (timeoutMs > 0 && waited + delay > timeoutMs) {
        throw new Error(
          `the database did not answer within DATABASE_CONNECT_TIMEOUT (${config.env.DATABASE_CONNECT_TIMEOUT} s): ${(error as Error).message}`,
          { cause: error },
        );
      }
      log.warn({ attempt, retryInMs: delay, reason: (error as Error).message }, 'database not answering; trying again');
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
