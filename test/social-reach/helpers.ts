export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it answers something truthy. */
export async function until<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(200);
  }
}

/** The `Cookie` header a browser sends back after the answer `start` set its OAuth connect cookie. */
export function browserOf(start: { headers: Headers }): Record<string, string> {
  const cookie = start.headers.getSetCookie().find((value) => value.startsWith('oauth_connect='));
  return cookie ? { cookie: cookie.split(';')[0] } : {};
}
