import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { Webhook, WebhookMessage } from './webhook.entity.js';
import { CreateWebhookInput, UpdateWebhookInput, WebhookDeliveriesArgs } from './webhook.input.js';
import { CreatedWebhook, WebhookDeliveryConnection, DeleteWebhookPayload } from './webhook.types.js';
import type { WebhooksContext } from './webhooks.context.js';
import { answerHoldsSecret } from '#lib/subgraph/idempotent-operations.js';

@Resolver(() => Webhook)
export class WebhookResolver {
  @Query(() => [Webhook], { nullable: true, description: 'Your webhooks, newest first (never their secrets)' })
  webhooks(@Ctx() ctx: WebhooksContext) {
    return ctx.webhooks.list();
  }

  @Query(() => WebhookDeliveryConnection, {
    nullable: true,
    description: 'Delivery attempts of one webhook, newest first: event, status code or error, duration',
  })
  webhookDeliveries(@Args(() => WebhookDeliveriesArgs) args: WebhookDeliveriesArgs, @Ctx() ctx: WebhooksContext) {
    return ctx.webhooks.deliveries(args.webhookId, args);
  }

  @Mutation(() => CreatedWebhook, {
    nullable: true,
    description: 'Makes a webhook; its signing secret is in the answer this once',
  })
  createWebhook(
    @Arg('input', () => CreateWebhookInput, { description: 'URL, event types, brands and a note' })
    input: CreateWebhookInput,
    @Ctx() ctx: WebhooksContext,
  ) {
    // The signing secret is shown this once: never kept for an Idempotency-Key's replay.
    answerHoldsSecret(ctx);
    return ctx.webhooks.create(input);
  }

  @Mutation(() => Webhook, { nullable: true, description: 'Changes a webhook (URL, events, brands, note, enabled)' })
  updateWebhook(
    @Arg('id', () => ID, { description: 'The webhook to change' }) id: string,
    @Arg('input', () => UpdateWebhookInput, { description: 'The fields to change' }) input: UpdateWebhookInput,
    @Ctx() ctx: WebhooksContext,
  ) {
    return ctx.webhooks.update(id, input);
  }

  @Mutation(() => DeleteWebhookPayload.type, {
    nullable: true,
    description: 'Deletes a webhook with its pending events and attempts',
  })
  async deleteWebhook(
    @Arg('id', () => ID, { description: 'The webhook to delete' }) id: string,
    @Ctx() ctx: WebhooksContext,
  ) {
    return DeleteWebhookPayload.of(await ctx.webhooks.delete(id));
  }

  @Mutation(() => WebhookMessage, {
    nullable: true,
    description: 'Sends the event of a delivery attempt again, now, with the same webhook-id',
  })
  redeliverWebhookEvent(
    @Arg('deliveryId', () => ID, {
      description: 'A delivery attempt (from webhookDeliveries) whose event to send again',
    })
    deliveryId: string,
    @Ctx() ctx: WebhooksContext,
  ) {
    return ctx.webhooks.redeliver(deliveryId);
  }
}
