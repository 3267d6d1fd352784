import type { AuthContext } from '#lib/subgraph/shield.js';
import type { WebhookService } from './webhook.service.js';

/** What the webhook resolvers use of a request's context (social.context.ts makes it). */
export interface WebhooksContext extends AuthContext {
  webhooks: WebhookService;
}
