import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '#lib/data/database.js';
import { Migration20261122100001Surveys } from './Migration20261122100001Surveys.js';
import { Migration20261126000001SurveyVersion } from './Migration20261126000001SurveyVersion.js';
import { Migration20261126000002IdempotencyKeys } from './Migration20261126000002IdempotencyKeys.js';
import { Migration20261126100001SurveyKeysetTimes } from './Migration20261126100001SurveyKeysetTimes.js';
import { Migration20261128000001SurveyEventFeed } from './Migration20261128000001SurveyEventFeed.js';

/** Every migration of the surveys schema, oldest first. */
export const surveysMigrations: Constructor<Migration>[] = [
  Migration20261122100001Surveys,
  Migration20261126000001SurveyVersion,
  Migration20261126000002IdempotencyKeys,
  Migration20261126100001SurveyKeysetTimes,
  Migration20261128000001SurveyEventFeed,
];
