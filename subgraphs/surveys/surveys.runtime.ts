import type { Orm } from '#lib/data/database.js';
import type { Identity } from '#lib/identity.js';
import { createMailer } from '#lib/subgraph/mail.js';
import { RateLimits } from '#lib/http/rate-limit.js';
import type { Deps } from '#lib/service.js';
import { createStorage } from '#lib/storage/create-storage.js';
import { startUploadSweeper } from '#lib/storage/uploads.js';
import { sweepExpiredKeys } from '#lib/data/idempotency.js';
import { EventFeed } from '#lib/data/event-feed.js';
import { SurveyEvent } from './survey/survey-event.entity.js';
import type { Survey } from './survey/survey.entity.js';
import { surveysById } from './survey/survey.service.js';
import { sweepAssetUploads, type AssetSettings } from './assets/asset.service.js';
import type { SignInSettings } from './sign-in/auth.service.js';

/** Sign-in requests per window (15 minutes). */
const SIGN_IN_WINDOW_SECONDS = 15 * 60;
/** From one client: enough for a person with a few devices and addresses, too few to mail-bomb with. */
const SIGN_IN_PER_CLIENT = 30;
/** For one address from one client: a stranger's requests use up the stranger's count, not the owner's. */
const SIGN_IN_PER_ADDRESS_AND_CLIENT = 5;
/**
 * For one address from every client together: ten times what any one client may ask, so no single
 * client (nor a few) can lock the owner out, while a flood from many clients still caps the mail an
 * address receives.
 */
const SIGN_IN_PER_ADDRESS = 50;

/** What the surveys subgraph keeps for its whole life; each request's context is built on it. */
export interface SurveysRuntime {
  assets: AssetSettings;
  signIn: SignInSettings;
  /** Verifies identity-service tokens, which name a surveyor by their `email` claim. */
  identity: Identity;
  /** The survey audit trail as it grows, which `surveyEvents` subscriptions follow (one reader per process). */
  surveyFeed: EventFeed<SurveyEvent, Survey>;
  close(): Promise<void>;
}

export async function createSurveysRuntime({ config, logger, identity }: Deps, orm: Orm): Promise<SurveysRuntime> {
  const log = logger.child({ component: 'surveys' });
  // The survey each event names, read once for all subscribers of a batch (`Subscription.surveyEvents { survey }`).
  const surveyFeed = await EventFeed.forEntity(config, orm, SurveyEvent, 'surveys', logger, {
    idOf: (event) => event.surveyId,
    load: (ids) => surveysById(orm.em.fork(), ids),
  });
  const limits = new RateLimits(config);
  const mailer = createMailer(config, logger);
  if (!config.env.ALLOWED_EMAIL_DOMAINS.length) {
    log.warn('ALLOWED_EMAIL_DOMAINS is unset: any e-mail address may sign in to the survey service');
  }
  const storage = createStorage(config);
  // Assets presigned and never committed go, rows and bytes, once their URL expired.
  // The same round drops Idempotency-Key records past their window, of callers who never came back.
  const sweeper = startUploadSweeper({
    name: 'surveys',
    logger,
    sweep: async (now) => {
      await sweepExpiredKeys(orm.em.fork());
      return sweepAssetUploads(orm.em.fork(), storage, now);
    },
  });
  return {
    assets: { storage, publicUrl: config.publicUrls.surveys, maxBytes: config.env.ASSET_MAX_BYTES },
    signIn: {
      adminEmails: config.env.ADMIN_EMAILS,
      allowedDomains: config.env.ALLOWED_EMAIL_DOMAINS,
      linkBaseUrl: config.env.MAGIC_LINK_BASE_URL,
      fromEmail: config.env.MAGIC_FROM_EMAIL,
      mailer,
      perClient: limits.limiter('surveys-sign-in-client', SIGN_IN_PER_CLIENT, SIGN_IN_WINDOW_SECONDS),
      perAddressAndClient: limits.limiter(
        'surveys-sign-in-address-client',
        SIGN_IN_PER_ADDRESS_AND_CLIENT,
        SIGN_IN_WINDOW_SECONDS,
      ),
      perAddress: limits.limiter('surveys-sign-in-address', SIGN_IN_PER_ADDRESS, SIGN_IN_WINDOW_SECONDS),
      logger: log,
    },
    identity,
    surveyFeed,
    close: async () => {
      await surveyFeed.close();
      await sweeper.stop();
      mailer.close();
      await limits.close();
    },
  };
}
