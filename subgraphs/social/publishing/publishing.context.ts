import type DataLoader from 'dataloader';
import type { PublishAttempt } from './publish-attempt.entity.js';

/** What the publishing resolver uses of a request's context (social.context.ts makes it). */
export interface PublishingContext {
  attemptsByPost: DataLoader<string, PublishAttempt[]>;
}
