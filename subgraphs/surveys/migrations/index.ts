import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '../../../lib/database.js';

/** Every migration of the surveys schema, oldest first. */
export const surveysMigrations: Constructor<Migration>[] = [];
