/**
 * The HttpOnly cookie that carries a survey session token in browsers: the surveys REST service
 * sets it on sign-in, and the surveys subgraph reads it from the request the gateway passes on.
 */
export const SESSION_COOKIE = 'survey_session';

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
