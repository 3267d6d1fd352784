import type DataLoader from 'dataloader';
import type { MergeService } from './merge.service.js';

/** What the merge resolvers use of a request's context (contacts.context.ts makes it). */
export interface MergeContext {
  merges: MergeService;
  /** The ids merged into each contact (merges still standing, through merges of merges). */
  mergedIdsOf: DataLoader<string, string[]>;
}
