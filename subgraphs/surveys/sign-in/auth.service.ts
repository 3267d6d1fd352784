import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import type { Logger } from '#lib/observability/logger.js';
import type { Mailer } from '#lib/subgraph/mail.js';
import { signInMails } from '#lib/observability/metrics.js';
import type { RateLimiter, RateLimitReport } from '#lib/http/rate-limit.js';
import { randomToken, sha256Hex } from '#lib/secrets.js';
import type { MagicLinkRequested, SurveySignIn, SurveyUser } from './auth.types.js';
import { escapeHtml } from '../export/export.service.js';
import { MagicLink, UserSession } from './sign-in.entity.js';

const LINK_LIFETIME_MS = 15 * 60 * 1000;
const SESSION_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;
/** Spent and expired links stay a day for the record, then go with the address's next request. */
const RETAIN_SPENT_MS = 24 * 60 * 60 * 1000;

// randomToken's base64url text; anything else is refused before it is hashed and looked up.
const TOKEN_SHAPE = /^[\w-]{20,100}$/;

/** The one answer to every sign-in request, so it tells nobody which addresses have access. */
const LINK_REQUESTED: MagicLinkRequested = {
  accepted: true,
  message: 'If this address may sign in, a sign-in link is on its way to it.',
};

/** Who may sign in, and how the link reaches them; derived once from Config (surveys.runtime.ts). */
export interface SignInSettings {
  /** Addresses that may always sign in and see every survey, lower case. */
  adminEmails: readonly string[];
  /** Domains whose addresses may sign in; empty: any address. */
  allowedDomains: readonly string[];
  /** The web page a sign-in link opens; the token rides in its query. */
  linkBaseUrl: string;
  fromEmail: string;
  mailer: Mailer;
  /** Per client address (the gateway forwards it): each requested link counts, however many in one request. */
  perClient: RateLimiter;
  /** Per e-mail address and client: what one client may ask for one address. */
  perAddressAndClient: RateLimiter;
  /** Per e-mail address from every client together: the ceiling on a flood from many clients. */
  perAddress: RateLimiter;
  logger: Logger;
}

export interface ActiveSession {
  id: string;
  user: SurveyUser;
  expiresAt: Date;
}

function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The rules of magic-link sign-in: who may sign in, how links are made and spent, and sessions. */
export class AuthService {
  constructor(
    private readonly em: EntityManager,
    private readonly settings: SignInSettings,
    /** The caller's address bucket (lib/http/client-address.ts), for the limit per client. */
    private readonly client = 'unknown',
    /** Hears where each sign-in limit stands for this caller, for the answer to say. */
    private readonly reportRateLimit?: RateLimitReport,
  ) {}

  private isAdmin(email: string): boolean {
    return this.settings.adminEmails.includes(normalizeEmail(email));
  }

  /** Admins always; others when their domain is in ALLOWED_EMAIL_DOMAINS (or that list is unset). */
  private maySignIn(email: string): boolean {
    const address = normalizeEmail(email);
    if (this.isAdmin(address)) return true;
    const domains = this.settings.allowedDomains;
    if (!domains.length) return true;
    const domain = address.slice(address.lastIndexOf('@') + 1);
    return domains.includes(domain);
  }

  private userOf(email: string): SurveyUser {
    return { email, isAdmin: this.isAdmin(email) };
  }

  /** The live session a token belongs to, or null (unknown, expired, or not a session token at all). */
  async sessionOf(token: string | undefined): Promise<ActiveSession | null> {
    if (!token || !TOKEN_SHAPE.test(token)) return null;
    const session = await this.em.findOne(UserSession, { tokenHash: sha256Hex(token), expiresAt: { $gt: new Date() } });
    // The rules are those of now, not of the sign-in: an address taken off ALLOWED_EMAIL_DOMAINS or
    // ADMIN_EMAILS loses its session (and admin sight) at once.
    if (!session || !this.maySignIn(session.email)) return null;
    return { id: session.id, user: this.userOf(session.email), expiresAt: session.expiresAt };
  }

  /**
   * The surveyor an identity-service token names by its `email` claim: the same person as a magic-link
   * session of that address (its surveys, admin or not), or null when the address may not sign in.
   */
  surveyorOf(email: string): SurveyUser | null {
    const address = normalizeEmail(email);
    return this.maySignIn(address) ? this.userOf(address) : null;
  }

  /**
   * Mails a sign-in link when the address may sign in. The caller gets the same answer either way,
   * so the endpoint does not reveal who has access; the limits per address apply to every address
   * for the same reason. The mail goes out after the answer, so its timing tells nothing either.
   * An address is counted per client first, so one stranger cannot lock its owner out; only a
   * flood from many clients reaches the address's own ceiling. A new link leaves the open ones be:
   * whoever asks for a link cannot cancel the one its owner just received.
   */
  async requestLink(rawEmail: string): Promise<MagicLinkRequested> {
    const email = normalizeEmail(rawEmail);
    const tooMany = 'Too many sign-in requests for this address; try again later';
    const report = this.reportRateLimit;
    await this.settings.perClient.consume(
      this.client,
      'Too many sign-in requests from this client; try again later',
      report,
    );
    await this.settings.perAddressAndClient.consume(`${this.client}|${email}`, tooMany, report);
    // Not reported: its count is every client's together, which would tell anyone how often others asked for the address.
    await this.settings.perAddress.consume(email, tooMany);
    if (!this.maySignIn(email)) {
      this.settings.logger.info({ email }, 'sign-in link refused: address not allowed');
      return LINK_REQUESTED;
    }
    const token = randomToken(32);
    await this.em.transactional(async (tx) => {
      // Long-dead links of the address are dropped; open ones stay valid until spent or expired.
      await tx.nativeDelete(MagicLink, { email, expiresAt: { $lt: new Date(Date.now() - RETAIN_SPENT_MS) } });
      tx.persist(
        Object.assign(new MagicLink(), {
          email,
          tokenHash: sha256Hex(token),
          expiresAt: new Date(Date.now() + LINK_LIFETIME_MS),
        }),
      );
    });
    const url = new URL(this.settings.linkBaseUrl);
    url.searchParams.set('token', token);
    const transport = this.settings.mailer.kind;
    void this.settings.mailer
      .send({
        from: this.settings.fromEmail,
        to: email,
        subject: 'Your sign-in link for venue surveys',
        text:
          `Open this link to sign in to venue surveys:\n\n${url.toString()}\n\nThe link works once and ` +
          `expires in ${LINK_LIFETIME_MS / 60_000} minutes. If you did not ask for it, ignore this mail.\n`,
        html:
          `<p>Open this link to sign in to venue surveys:</p><p><a ` +
          `href="${escapeHtml(url.toString())}">Sign in</a></p><p>The link works once and expires ` +
          `in ${LINK_LIFETIME_MS / 60_000} minutes. If you did not ask for it, ignore this mail.</p>`,
      })
      .then(
        () => signInMails.inc({ transport, outcome: 'sent' }),
        (error: unknown) => {
          signInMails.inc({ transport, outcome: 'failed' });
          this.settings.logger.error({ err: error, email }, 'sign-in mail could not be sent');
        },
      );
    return LINK_REQUESTED;
  }

  /** Spends a link (once) and opens a session; a used, voided, expired or unknown token is UNAUTHENTICATED. */
  async verifyLink(token: string): Promise<SurveySignIn> {
    const invalid = new AppError(
      ErrorCode.UNAUTHENTICATED,
      'This sign-in link is invalid, used or expired; request a new one',
    );
    if (!TOKEN_SHAPE.test(token)) throw invalid;
    const sessionToken = randomToken(32);
    const expiresAt = new Date(Date.now() + SESSION_LIFETIME_MS);
    const email = await this.em.transactional(async (tx) => {
      const link = await tx.findOne(MagicLink, { tokenHash: sha256Hex(token) });
      if (!link || link.usedAt || link.voidedAt || link.expiresAt <= new Date()) return null;
      // The condition on used_at makes spending atomic: of two concurrent verifies only one updates the row.
      const spent = await tx.nativeUpdate(
        MagicLink,
        { id: link.id, usedAt: null, voidedAt: null },
        { usedAt: new Date() },
      );
      if (spent !== 1) return null;
      // Signed in: the address's other open links have served their purpose and would only be left lying in the mailbox.
      await tx.nativeUpdate(
        MagicLink,
        { email: link.email, usedAt: null, voidedAt: null, id: { $ne: link.id } },
        { voidedAt: new Date() },
      );
      // Access may have been withdrawn since the link was mailed.
      if (!this.maySignIn(link.email)) return null;
      await tx.nativeDelete(UserSession, { email: link.email, expiresAt: { $lte: new Date() } });
      tx.persist(
        Object.assign(new UserSession(), { email: link.email, tokenHash: sha256Hex(sessionToken), expiresAt }),
      );
      return link.email;
    });
    if (!email) throw invalid;
    return { token: sessionToken, user: this.userOf(email), expiresAt };
  }

  async endSession(sessionId: string): Promise<void> {
    await this.em.nativeDelete(UserSession, { id: sessionId });
  }
}
