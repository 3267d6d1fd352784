import type { CookieOptions, Response } from 'express';
import { z } from 'zod';

/**
 * The HttpOnly cookie that carries a survey session token in browsers: the surveys REST service
 * and the gateway set it on sign-in, and the surveys subgraph reads it from the request the gateway passes on.
 */
export const SESSION_COOKIE = 'survey_session';

/** The only subgraph whose answers may set or clear the session cookie through the gateway. */
export const SESSION_COOKIE_SUBGRAPH = 'surveys';

/**
 * The answer extension in which the surveys subgraph states what a sign-in or sign-out asks of the
 * cookie. A subgraph cannot reach the browser's cookies itself (in process it has no HTTP answer, and
 * over HTTP its answer goes to the gateway); the gateway turns this into `Set-Cookie` and strips it.
 */
export const SESSION_COOKIE_EXTENSION = 'sessionCookie';

/** What a sign-in (a token until `expiresAt`) or a sign-out (`clear`) asks of the session cookie. */
export const sessionCookieChangeSchema = z.union([
  z.object({ token: z.string().min(1).max(200), expiresAt: z.iso.datetime({ offset: true }) }).strict(),
  z.object({ clear: z.literal(true) }).strict(),
]);
export type SessionCookieChange = z.infer<typeof sessionCookieChangeSchema>;

/** The cookie's attributes: never readable by script, not sent on cross-site requests, HTTPS-only where served over HTTPS. */
function sessionCookieOptions(secure: boolean): CookieOptions {
  return { httpOnly: true, sameSite: 'lax', secure, path: '/' };
}

/** Sets or clears the session cookie on an answer: the one way the REST service and the gateway both do it. */
export function applySessionCookie(res: Response, change: SessionCookieChange, secure: boolean): void {
  const options = sessionCookieOptions(secure);
  if ('clear' in change) {
    res.clearCookie(SESSION_COOKIE, options);
    return;
  }
  const maxAge = Math.max(0, new Date(change.expiresAt).getTime() - Date.now());
  res.cookie(SESSION_COOKIE, change.token, { ...options, maxAge });
}

/** The session cookie's value in a `Cookie` header, or undefined (absent, or not decodable). */
export function sessionCookieOf(header: string | string[] | undefined): string | undefined {
  return cookieOf(header, SESSION_COOKIE);
}

/** The value of the cookie `name` in a `Cookie` header, or undefined (absent, or not decodable). */
export function cookieOf(header: string | string[] | undefined, name: string): string | undefined {
  const text = Array.isArray(header) ? header.join('; ') : header;
  for (const part of (text ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index <= 0 || part.slice(0, index).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(index + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}
