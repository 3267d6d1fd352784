import { ApiKey } from './api-key.entity.js';
import { Brand } from './brand.entity.js';
import { Campaign } from './campaign.entity.js';
import { OAuthState } from './integration-state.entity.js';
import { Integration } from './integration.entity.js';
import { MediaFile } from './media.entity.js';
import { ContentEvent } from './content-event.entity.js';
import { Post } from './post.entity.js';
import { PublishAttempt } from './publish-attempt.entity.js';

/** Every MikroORM entity of the social schema (the API, the publisher worker and `npm run apikey` open it). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const socialEntities: any[] = [Brand, Post, Campaign, ContentEvent, PublishAttempt, ApiKey, Integration, OAuthState, MediaFile];
