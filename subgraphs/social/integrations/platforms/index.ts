import type { Config } from '#lib/config.js';
import type { Platform, PublishingPlatform } from '../../social.platforms.js';
import { MastodonPlatform } from './mastodon.platform.js';
import type { PlatformAdapter } from './platform.js';
import { XPlatform } from './x.platform.js';

export * from './platform.js';

/** One adapter for each platform the enum says is published to (social.platforms.ts), and no other. */
const ADAPTERS: Record<
  PublishingPlatform,
  new (...args: ConstructorParameters<typeof MastodonPlatform>) => PlatformAdapter
> = {
  mastodon: MastodonPlatform,
  x: XPlatform,
};

const isPublishing = (platform: string): platform is PublishingPlatform => Object.hasOwn(ADAPTERS, platform);

/**
 * The platforms on offer: those with a client id in config. A platform without one is not
 * offered anywhere (connect answers 404 for it).
 */
export class Platforms {
  private readonly adapters = new Map<Platform, PlatformAdapter>();

  constructor(config: Config) {
    const http = { timeoutMs: config.env.PLATFORM_TIMEOUT_MS };
    for (const [platform, credentials] of Object.entries(config.platforms)) {
      if (isPublishing(platform)) this.adapters.set(platform, new ADAPTERS[platform](credentials, http));
    }
  }

  get(platform: Platform): PlatformAdapter | undefined {
    return this.adapters.get(platform);
  }

  configured(): Platform[] {
    return [...this.adapters.keys()].sort();
  }
}
