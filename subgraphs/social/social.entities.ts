import { ApiKey } from './access/api-key.entity.js';
import { Brand } from './access/brand.entity.js';
import { Campaign } from './content/campaign.entity.js';
import { ContentEvent } from './content/content-event.entity.js';
import { Post } from './content/post.entity.js';
import { Integration } from './integrations/integration.entity.js';
import { PendingConnect } from './integrations/pending-connect.entity.js';
import { MediaFile } from './media/media.entity.js';
import { PublishAttempt } from './publishing/publish-attempt.entity.js';
import { ReviewLink } from './review/review-link.entity.js';
import { Webhook, WebhookDelivery, WebhookMessage, WebhookOutbox } from './webhooks/webhook.entity.js';

/** Every MikroORM entity of the social schema (the API, the publisher worker and `npm run apikey` open it). */
export const socialEntities = [
  Brand,
  Post,
  Campaign,
  ContentEvent,
  PublishAttempt,
  ApiKey,
  Integration,
  PendingConnect,
  MediaFile,
  Webhook,
  WebhookMessage,
  WebhookDelivery,
  WebhookOutbox,
  ReviewLink,
];
