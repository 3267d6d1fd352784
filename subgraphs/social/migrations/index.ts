import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '#lib/data/database.js';
import { Migration20261122100001SocialCore } from './Migration20261122100001SocialCore.js';
import { Migration20261122200001SocialReach } from './Migration20261122200001SocialReach.js';
import { Migration20261123100001PublishOutcome } from './Migration20261123100001PublishOutcome.js';
import { Migration20261123100001SocialWebhooks } from './Migration20261123100001SocialWebhooks.js';
import { Migration20261126000001PostVersion } from './Migration20261126000001PostVersion.js';
import { Migration20261126000002IdempotencyKeys } from './Migration20261126000002IdempotencyKeys.js';
import { Migration20261126000003BrandVersion } from './Migration20261126000003BrandVersion.js';
import { Migration20261126100001KeysetTimes } from './Migration20261126100001KeysetTimes.js';
import { Migration20261127000001PlatformNames } from './Migration20261127000001PlatformNames.js';
import { Migration20261128000001ContentEventFeed } from './Migration20261128000001ContentEventFeed.js';

/**
 * Every migration of the social schema, oldest first. Append new ones at the end (timestamped
 * names, e.g. `Migration20261122200001Media`); never edit one that has shipped.
 */
export const socialMigrations: Constructor<Migration>[] = [
  Migration20261122100001SocialCore,
  Migration20261122200001SocialReach,
  Migration20261123100001PublishOutcome,
  Migration20261123100001SocialWebhooks,
  Migration20261126000001PostVersion,
  Migration20261126000002IdempotencyKeys,
  Migration20261126000003BrandVersion,
  Migration20261126100001KeysetTimes,
  Migration20261127000001PlatformNames,
  Migration20261128000001ContentEventFeed,
];
