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

/** The settings that point the social service at fake platforms (`fake-platforms.ts`), its REST port fixed so the OAuth redirect comes back to it. */
export function fakePlatformEnv(
  port: number,
  platforms: {
    mastodon: { clientId: string; clientSecret: string; url: string };
    x?: { clientId: string; clientSecret: string; url: string };
  },
): Record<string, string> {
  const { mastodon, x } = platforms;
  return {
    SOCIAL_REST_PORT: String(port),
    SOCIAL_PUBLIC_URL: `http://127.0.0.1:${port}`,
    MASTODON_CLIENT_ID: mastodon.clientId,
    MASTODON_CLIENT_SECRET: mastodon.clientSecret,
    MASTODON_BASE_URL: mastodon.url,
    ...(x ? { X_CLIENT_ID: x.clientId, X_CLIENT_SECRET: x.clientSecret, X_BASE_URL: x.url } : {}),
  };
}
