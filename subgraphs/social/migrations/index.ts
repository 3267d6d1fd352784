import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '../../../lib/database.js';

/** Every migration of the social schema, oldest first. */
export const socialMigrations: Constructor<Migration>[] = [];
