import { Field, ObjectType } from 'type-graphql';
import { ConnectionType } from '#lib/data/pagination.js';
import { Webhook, WebhookDelivery } from './webhook.entity.js';
import { DeletePayloadType } from '#lib/subgraph/delete-payload.js';

@ObjectType({ description: 'A new webhook: `secret` is shown this once and never again' })
export class CreatedWebhook {
  @Field(() => String, {
    description:
      'The signing secret (whsec_...), to verify webhook-signature with: store it now, it is never shown again',
  })
  secret!: string;

  @Field(() => Webhook, { description: 'The webhook, as webhooks lists it' })
  webhook!: Webhook;
}

export const WebhookDeliveryConnection = ConnectionType(WebhookDelivery, 'WebhookDelivery');

export const DeleteWebhookPayload = DeletePayloadType(Webhook, 'Webhook');
