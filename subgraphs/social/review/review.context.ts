import type { AuthContext } from '#lib/subgraph/shield.js';
import type { ReviewLinkService } from './review-link.service.js';

/** What the review link resolvers use of a request's context (social.context.ts makes it). */
export interface ReviewContext extends AuthContext {
  reviewLinks: ReviewLinkService;
}
