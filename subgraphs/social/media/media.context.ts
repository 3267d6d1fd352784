import type { AuthContext } from '#lib/subgraph/shield.js';
import type { AiImageService } from './ai-image.service.js';
import type { MediaService } from './media.service.js';

/** What the media resolvers use of a request's context (social.context.ts makes it). */
export interface MediaContext extends AuthContext {
  media: MediaService;
  aiImages: AiImageService;
}
