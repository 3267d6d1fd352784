import { createHash } from 'node:crypto';
import { AppError, ErrorCode } from '#lib/errors.js';
import type { LiveCaller } from './subgraph-streams.js';

/** Most subscriptions on one connection (a WebSocket carries many; an HTTP stream is one). */
export const MAX_SUBSCRIPTIONS_PER_CONNECTION = 100;
/** Most subscriptions of one caller on this instance, whatever their transports. */
export const MAX_SUBSCRIPTIONS_PER_CALLER = 1000;

/** The subscriptions of one connection, counted against its cap. */
export class ConnectionSlots {
  open = 0;
}

/**
 * Caps subscriptions per connection and per caller. A caller is its credentials (hashed, so no secret
 * is kept as a key), or its address when it sent none; a subscription holds its place until it ends.
 */
export class SubscriptionLimits {
  private readonly perCaller = new Map<string, number>();

  /** Takes a place, answering how to give it back, or the refusal (`RATE_LIMITED`). */
  take(caller: LiveCaller, connection: ConnectionSlots | undefined): (() => void) | AppError {
    if (connection && connection.open >= MAX_SUBSCRIPTIONS_PER_CONNECTION) {
      return new AppError(
        ErrorCode.RATE_LIMITED,
        `This connection has ${MAX_SUBSCRIPTIONS_PER_CONNECTION} subscriptions, the most it may carry: end one, or open another connection`,
      );
    }
    const key = callerKey(caller);
    const held = this.perCaller.get(key) ?? 0;
    if (held >= MAX_SUBSCRIPTIONS_PER_CALLER) {
      return new AppError(
        ErrorCode.RATE_LIMITED,
        `You have ${MAX_SUBSCRIPTIONS_PER_CALLER} subscriptions on this instance, the most one caller may hold: end one first`,
      );
    }
    this.perCaller.set(key, held + 1);
    if (connection) connection.open += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      if (connection) connection.open -= 1;
      const left = (this.perCaller.get(key) ?? 1) - 1;
      if (left > 0) this.perCaller.set(key, left);
      else this.perCaller.delete(key);
    };
  }
}

function callerKey(caller: LiveCaller): string {
  const { authorization, 'x-api-key': apiKey, cookie } = caller.forwardHeaders;
  const credentials = authorization ?? apiKey ?? cookie;
  if (credentials) return createHash('sha256').update(credentials).digest('base64url');
  return `address:${caller.clientAddress ?? 'unknown'}`;
}
