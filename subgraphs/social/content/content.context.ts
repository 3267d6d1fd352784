import type DataLoader from 'dataloader';
import type { AccessContext } from '../access/access.context.js';
import type { CampaignService } from './campaign.service.js';
import type { ContentEvent } from './content-event.entity.js';
import type { ContentEventService } from './content-event.service.js';
import type { Post } from './post.entity.js';
import type { PostService } from './post.service.js';
import type { RollupService } from './rollup.service.js';

/** What the content resolvers use of a request's context (social.context.ts makes it); posts name their brand, so brands too. */
export interface ContentContext extends AccessContext {
  posts: PostService;
  campaigns: CampaignService;
  events: ContentEventService;
  rollups: RollupService;
  eventsByContent: DataLoader<string, ContentEvent[]>;
  /** A post by id, null when deleted or out of reach (an event names its post). */
  postById: DataLoader<string, Post | null>;
  postsByCampaign: DataLoader<string, Post[]>;
}
