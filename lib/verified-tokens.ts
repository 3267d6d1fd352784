/** How long a verified token is believed without checking its signature again: a key the identity service drops is refused after at most this. */
const REMEMBER_MS = 60_000;
/** Most tokens remembered; the oldest is forgotten first. */
const MOST_TOKENS = 10_000;

/**
 * Bearer tokens verified lately, so that a caller who sends the same token again (every request of a
 * page, and every event of a live subscription, whose caller is authenticated again at each one) costs
 * a map lookup instead of a signature check. An entry holds until the earliest of the token's own end
 * (`exp`, its maximum age) and `REMEMBER_MS`; nothing is remembered of a token that failed.
 */
export class VerifiedTokens<Principal> {
  private readonly entries = new Map<string, { principal: Principal; until: number }>();

  recall(token: string, now = Date.now()): Principal | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (entry.until <= now) {
      this.entries.delete(token);
      return undefined;
    }
    return entry.principal;
  }

  /** Remembers `principal` for `token` until `validUntil` (ms), at most `REMEMBER_MS` from now. */
  remember(token: string, principal: Principal, validUntil: number, now = Date.now()): void {
    if (this.entries.size >= MOST_TOKENS) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(token, { principal, until: Math.min(validUntil, now + REMEMBER_MS) });
  }
}
