import { loadConfig, type Config } from '#lib/config.js';
import { PORT_VARIABLES } from '#test/support/ports.js';

/**
 * The decisions production asks for (lib/production.ts), as a benchmark makes them: the embedded
 * development issuer (tokens minted by the bench), the contacts book open, and an SMTP address no
 * mail is sent to (no benchmark signs in).
 */
export const BENCH_PRODUCTION_DECISIONS = {
  // One instance of each part (npm start's workers share one store): production's per-process state is decided.
  SINGLE_INSTANCE: 'true',
  DEV_IDENTITY: 'allow',
  CONTACTS_AUTH: 'open',
  SMTP_URL: 'smtp://127.0.0.1:2525',
} as const;

/**
 * Settings a bench passes on to the platforms it starts, from its own environment: the gateway's short
 * path (to compare both paths) and a manifest of trusted documents (the chain's `documentId` target).
 */
export function benchPassedSettings(): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const name of ['GATEWAY_SHORT_PATH', 'TRUSTED_DOCUMENTS']) {
    const value = process.env[name];
    if (value !== undefined) passed[name] = value;
  }
  return passed;
}

/**
 * The configuration of the whole platform started inside a bench's process, as production runs it
 * (`BENCH_PRODUCTION_DECISIONS`), every port free, its files under `dataDir`, on `databaseUrl`
 * (embedded PGlite when undefined); `settings` add to it or override it.
 */
export function benchPlatformConfig(
  dataDir: string,
  databaseUrl: string | undefined,
  settings: Record<string, string> = {},
): Config {
  return loadConfig({
    NODE_ENV: 'production',
    ...BENCH_PRODUCTION_DECISIONS,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    ...Object.fromEntries(PORT_VARIABLES.map((name) => [name, '0'])),
    ...benchPassedSettings(),
    ...settings,
  });
}
