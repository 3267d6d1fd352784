import type { Config } from '../../lib/config.js';
import type { Logger } from '../../lib/logger.js';
import { createMailer, type Mailer } from '../../lib/mail.js';
import { RateLimits, type RateLimiter } from '../../lib/rate-limit.js';
import { createStorage, type ObjectStorage } from '../../lib/storage.js';

/** Sign-in requests per e-mail address per window (DESIGN: 5 per address per 15 minutes). */
const SIGN_IN_PER_ADDRESS = 5;
const SIGN_IN_WINDOW_SECONDS = 15 * 60;

/** What the surveys subgraph keeps for its whole life; each request's context is built on it. */
export interface SurveysRuntime {
  config: Config;
  logger: Logger;
  storage: ObjectStorage;
  mailer: Mailer;
  signInPerAddress: RateLimiter;
  /** Base of the surveys REST service, which serves the local store's signed URLs. */
  publicUrl: string;
  close(): Promise<void>;
}

export function createSurveysRuntime(config: Config, logger: Logger): SurveysRuntime {
  const limits = new RateLimits(config);
  const mailer = createMailer(config, logger);
  if (!config.env.ALLOWED_EMAIL_DOMAINS.length) {
    logger.warn({ component: 'surveys' }, 'ALLOWED_EMAIL_DOMAINS is unset: any e-mail address may sign in to the survey service');
  }
  return {
    config,
    logger: logger.child({ component: 'surveys' }),
    storage: createStorage(config),
    mailer,
    signInPerAddress: limits.limiter('surveys-sign-in-address', SIGN_IN_PER_ADDRESS, SIGN_IN_WINDOW_SECONDS),
    publicUrl: config.publicUrls.surveys,
    close: async () => {
      mailer.close();
      await limits.close();
    },
  };
}
