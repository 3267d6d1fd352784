import { registerEnumType } from 'type-graphql';

/**
 * The social networks a post may name, the graph's `Platform` enum. The set is wider than the networks
 * this service publishes to (those with an adapter in integrations/platforms/): the legacy REST contract
 * took any network's name, and its clients name the networks a social scheduler targets, which must stay
 * accepted (a post may name a network it is written for before the service publishes there).
 * Each value is the lower-case word the rows and the webhook payloads carry, unchanged; the graph names
 * it in UPPER_CASE. A name with a hyphen cannot be an enum value, so no network is named with one.
 */
export enum Platform {
  MASTODON = 'mastodon',
  X = 'x',
  TWITTER = 'twitter',
  BLUESKY = 'bluesky',
  THREADS = 'threads',
  LINKEDIN = 'linkedin',
  FACEBOOK = 'facebook',
  INSTAGRAM = 'instagram',
  TIKTOK = 'tiktok',
  YOUTUBE = 'youtube',
  PINTEREST = 'pinterest',
  REDDIT = 'reddit',
  TUMBLR = 'tumblr',
  TELEGRAM = 'telegram',
  DISCORD = 'discord',
  SLACK = 'slack',
  GOOGLE_BUSINESS = 'google_business',
  SNAPCHAT = 'snapchat',
  WHATSAPP = 'whatsapp',
  NOSTR = 'nostr',
  LEMMY = 'lemmy',
  FARCASTER = 'farcaster',
  MEDIUM = 'medium',
  WORDPRESS = 'wordpress',
  DRIBBBLE = 'dribbble',
  VK = 'vk',
  WECHAT = 'wechat',
  WEIBO = 'weibo',
}

/** A network's name as people write it, and whether the service publishes there (has an adapter). */
interface Network {
  name: string;
  publishes: boolean;
  note?: string;
}

/**
 * Every value's network. `publishes` is what integrations/platforms/index.ts must have an adapter for
 * (its table is typed by `PublishingPlatform`, so the two cannot drift apart).
 */
const NETWORKS = {
  [Platform.MASTODON]: { name: 'Mastodon (any instance)', publishes: true },
  [Platform.X]: { name: 'X', publishes: true },
  [Platform.TWITTER]: {
    name: 'Twitter',
    publishes: false,
    note: "X's former name, kept as its own value for the clients that still send it; to publish to the account, name X",
  },
  [Platform.BLUESKY]: { name: 'Bluesky', publishes: false },
  [Platform.THREADS]: { name: 'Threads', publishes: false },
  [Platform.LINKEDIN]: { name: 'LinkedIn', publishes: false },
  [Platform.FACEBOOK]: { name: 'Facebook', publishes: false },
  [Platform.INSTAGRAM]: { name: 'Instagram', publishes: false },
  [Platform.TIKTOK]: { name: 'TikTok', publishes: false },
  [Platform.YOUTUBE]: { name: 'YouTube', publishes: false },
  [Platform.PINTEREST]: { name: 'Pinterest', publishes: false },
  [Platform.REDDIT]: { name: 'Reddit', publishes: false },
  [Platform.TUMBLR]: { name: 'Tumblr', publishes: false },
  [Platform.TELEGRAM]: { name: 'Telegram', publishes: false },
  [Platform.DISCORD]: { name: 'Discord', publishes: false },
  [Platform.SLACK]: { name: 'Slack', publishes: false },
  [Platform.GOOGLE_BUSINESS]: { name: 'Google Business Profile', publishes: false },
  [Platform.SNAPCHAT]: { name: 'Snapchat', publishes: false },
  [Platform.WHATSAPP]: { name: 'WhatsApp (channels)', publishes: false },
  [Platform.NOSTR]: { name: 'Nostr', publishes: false },
  [Platform.LEMMY]: { name: 'Lemmy', publishes: false },
  [Platform.FARCASTER]: { name: 'Farcaster', publishes: false },
  [Platform.MEDIUM]: { name: 'Medium', publishes: false },
  [Platform.WORDPRESS]: { name: 'WordPress', publishes: false },
  [Platform.DRIBBBLE]: { name: 'Dribbble', publishes: false },
  [Platform.VK]: { name: 'VK', publishes: false },
  [Platform.WECHAT]: { name: 'WeChat', publishes: false },
  [Platform.WEIBO]: { name: 'Weibo', publishes: false },
} as const satisfies Record<Platform, Network>;

/** The platforms the service publishes to: each has an adapter (integrations/platforms/). */
export type PublishingPlatform = {
  [Value in Platform]: (typeof NETWORKS)[Value]['publishes'] extends true ? Value : never;
}[Platform];

/** Every platform, in the enum's order. */
export const PLATFORMS: readonly Platform[] = Object.values(Platform);

const PUBLISHING = PLATFORMS.filter((platform) => NETWORKS[platform].publishes);

function describe(network: Network): string {
  const reach = network.publishes
    ? 'published to, once an account is connected'
    : 'a target name only, not published to yet';
  return `${network.name}: ${reach}${network.note ? `. ${network.note}` : ''}`;
}

registerEnumType(Platform, {
  name: 'Platform',
  description:
    'A social network a post may name as a target. The set is wider than the networks published to today ' +
    `(${PUBLISHING.map((platform) => platform.toUpperCase()).join(', ')}): clients name every network a scheduler ` +
    'targets. Each value says whether the service publishes there',
  valuesConfig: Object.fromEntries(
    Object.entries(Platform).map(([name, platform]) => [name, { description: describe(NETWORKS[platform]) }]),
  ),
});
