import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';

/**
 * An HTTPS endpoint of one user that is told about changes (Standard Webhooks). The signing
 * secret is stored sealed, like platform tokens, because signing needs it back; it is shown once.
 */
@Entity({ tableName: 'webhook' })
@ObjectType({ description: 'An endpoint that receives signed event notifications (Standard Webhooks)' })
export class Webhook {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the webhook' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Where events are POSTed' })
  url!: string;

  @Property({ type: 'text[]' })
  @Field(() => [String], { description: 'The event types it receives, e.g. post.published' })
  events: string[] = [];

  /** Null: every brand of the owner, and the events that belong to no brand (integrations). */
  @Property({ type: 'uuid[]', nullable: true })
  @Field(() => [ID], { nullable: true, description: 'Brands whose events it receives; null means every brand' })
  brandIds: string[] | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'A note of the owner about the endpoint' })
  description: string | null = null;

  @Property({ type: 'text' })
  secretSealed!: string;

  @Property({ type: 'boolean' })
  @Field(() => Boolean, { description: 'False once disabled, by its owner or after 5 days of failed deliveries' })
  enabled: boolean = true;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Why the webhook was disabled; null while enabled' })
  disabledReason: string | null = null;

  /** Start of the current run of failed attempts; null after a success. */
  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, {
    nullable: true,
    description: 'Since when every delivery attempt has failed; null when the last one succeeded',
  })
  failingSince: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the webhook was made' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the webhook last changed' })
  updatedAt: Date = new Date();
}

export enum WebhookMessageStatus {
  PENDING = 'pending',
  SUCCEEDED = 'succeeded',
  FAILED = 'failed',
}

registerEnumType(WebhookMessageStatus, {
  name: 'WebhookEventStatus',
  description: 'Where the delivery of one event to one webhook stands',
  valuesConfig: {
    PENDING: { description: 'Not delivered yet; an attempt is due' },
    SUCCEEDED: { description: 'The endpoint answered 2xx' },
    FAILED: { description: 'Every attempt failed (or the webhook was disabled)' },
  },
});

/**
 * One event on its way to one webhook. Its `eventId` is the `webhook-id` header of every attempt,
 * so a receiver can drop the repeats of at-least-once delivery; the body is kept as sent.
 */
@Entity({ tableName: 'webhook_message' })
@ObjectType('WebhookEvent', { description: 'One event on its way to one webhook, with where its delivery stands' })
export class WebhookMessage {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of this event for this webhook' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The webhook it goes to' })
  webhookId!: string;

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the event, sent as the webhook-id header (the same on every attempt)' })
  eventId!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Event type, e.g. post.published' })
  type!: string;

  @Property({ type: 'text' })
  body!: string;

  @Property({ type: 'text' })
  @Field(() => WebhookMessageStatus, { description: 'Where its delivery stands' })
  status: WebhookMessageStatus = WebhookMessageStatus.PENDING;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Attempts made so far' })
  attempts: number = 0;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the next automatic attempt is due; null when none is' })
  nextAttemptAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the event was queued for the webhook' })
  createdAt: Date = new Date();
}

/** One attempt to deliver one event: what the endpoint answered, or why there was no answer. */
@Entity({ tableName: 'webhook_delivery' })
@ObjectType({ description: 'One delivery attempt of an event to a webhook' })
export class WebhookDelivery {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the attempt (pass it to redeliverWebhookEvent to send the event again)' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  messageId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The webhook attempted' })
  webhookId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the event (its webhook-id header)' })
  eventId!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Event type, e.g. post.published' })
  type!: string;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Which attempt of this event it was, from 1' })
  attempt!: number;

  @Property({ type: 'boolean' })
  @Field(() => Boolean, { description: 'True when the endpoint answered 2xx in time' })
  succeeded!: boolean;

  @Property({ type: 'integer', nullable: true })
  @Field(() => Int, { nullable: true, description: 'HTTP status the endpoint answered; null when it did not answer' })
  statusCode: number | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, {
    nullable: true,
    description: 'Why the attempt failed when the endpoint did not answer 2xx (timeout, refused address, ...)',
  })
  error: string | null = null;

  /** The start of the answer only: bodies are read up to a small cap and never kept whole. */
  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'The first characters of the answer body' })
  responseExcerpt: string | null = null;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'How long the attempt took, in milliseconds' })
  durationMs!: number;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the attempt was made' })
  attemptedAt: Date = new Date();
}

/** A committed change waiting to become webhook messages (written by triggers; see the migration). */
@Entity({ tableName: 'webhook_outbox' })
export class WebhookOutbox {
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  seq!: string;

  @Property({ type: 'text' })
  source!: 'content_event' | 'integration';

  @Property({ type: 'uuid' })
  sourceId!: string;

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'uuid', nullable: true })
  brandId: string | null = null;

  @Property({ type: 'jsonb', nullable: true })
  data: Record<string, unknown> | null = null;

  @Property({ type: 'timestamptz' })
  occurredAt!: Date;
}
