import type DataLoader from 'dataloader';
import type { Contact } from '../contact/contact.entity.js';
import type { MergeService } from './merge.service.js';

/** What the merge resolvers use of a request's context (contacts.context.ts makes it). */
export interface MergeContext {
  merges: MergeService;
  /** The ids merged into each contact (merges still standing, through merges of merges). */
  mergedIdsOf: DataLoader<string, string[]>;
  /** The live contact each contact is, or was merged into (null when deleted otherwise). */
  survivorOf: DataLoader<string, Contact | null>;
}
