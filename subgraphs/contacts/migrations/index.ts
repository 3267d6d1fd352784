import { Migration20261122000001Contacts } from './Migration20261122000001Contacts.js';
import { Migration20261122000002ContactWork } from './Migration20261122000002ContactWork.js';
import { Migration20261123000001ContactCount } from './Migration20261123000001ContactCount.js';
import { Migration20261123000002ContactSearchTotal } from './Migration20261123000002ContactSearchTotal.js';
import { Migration20261123200001UploadReservations } from './Migration20261123200001UploadReservations.js';
import { Migration20261123210001ContactSearchEstimate } from './Migration20261123210001ContactSearchEstimate.js';
import { Migration20261126000001RowVersions } from './Migration20261126000001RowVersions.js';
import { Migration20261126000002IdempotencyKeys } from './Migration20261126000002IdempotencyKeys.js';
import { Migration20261126000003PipelineVersion } from './Migration20261126000003PipelineVersion.js';
import { Migration20261126000004ContactImportJobs } from './Migration20261126000004ContactImportJobs.js';
import { Migration20261128000001ContactEvents } from './Migration20261128000001ContactEvents.js';
import { Migration20261128100001ContactDuplicates } from './Migration20261128100001ContactDuplicates.js';
import { Migration20261128200001ContactDuplicateChanges } from './Migration20261128200001ContactDuplicateChanges.js';
import { Migration20261129000001ContactSearchQuery } from './Migration20261129000001ContactSearchQuery.js';

/** Every migration of the contacts schema, oldest first. */
export const contactsMigrations = [
  Migration20261122000001Contacts,
  Migration20261122000002ContactWork,
  Migration20261123000001ContactCount,
  Migration20261123000002ContactSearchTotal,
  Migration20261123200001UploadReservations,
  Migration20261123210001ContactSearchEstimate,
  Migration20261126000001RowVersions,
  Migration20261126000002IdempotencyKeys,
  Migration20261126000003PipelineVersion,
  Migration20261126000004ContactImportJobs,
  Migration20261128000001ContactEvents,
  Migration20261128100001ContactDuplicates,
  Migration20261128200001ContactDuplicateChanges,
  Migration20261129000001ContactSearchQuery,
];
