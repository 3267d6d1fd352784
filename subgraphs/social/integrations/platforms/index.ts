import type { Config } from '../../../../lib/config.js';
import { MastodonPlatform } from './mastodon.platform.js';
import type { PlatformAdapter } from './platform.js';
import { XPlatform } from './x.platform.js';

export * from './platform.js';

const ADAPTERS: Record<string, new (...args: ConstructorParameters<typeof MastodonPlatform>) => PlatformAdapter> = {
  mastodon: MastodonPlatform,
  x: XPlatform,
};

/**
 * The platforms on offer: those with a client id in config. A platform without one is not
 * offered anywhere (connect answers 404 for it).
 */
export class Platforms {
  private readonly adapters = new Map<string, PlatformAdapter>();

  constructor(config: Config) {
    const http = { timeoutMs: config.env.PLATFORM_TIMEOUT_MS };
    for (const [platform, credentials] of Object.entries(config.platforms)) {
      const Adapter = ADAPTERS[platform];
      if (Adapter) this.adapters.set(platform, new Adapter(credentials, http));
    }
  }

  get(platform: string): PlatformAdapter | undefined {
    return this.adapters.get(platform);
  }

  configured(): string[] {
    return [...this.adapters.keys()].sort();
  }
}
