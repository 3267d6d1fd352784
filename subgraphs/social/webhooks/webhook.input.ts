import { ArrayMaxSize, IsOptional, IsString, MaxLength } from 'class-validator';
import { ArgsType, Field, ID, InputType } from 'type-graphql';
import { ConnectionArgs } from '#lib/data/pagination.js';

@InputType({ description: 'A new webhook: where to send which events of which brands' })
export class CreateWebhookInput {
  @Field(() => String, { description: 'The endpoint to POST events to: https (http only in development)' })
  @IsString()
  @MaxLength(2000)
  url!: string;

  @Field(() => [String], {
    description: 'Event types to receive, e.g. post.published, post.failed, integration.needs_reconnect',
  })
  @ArrayMaxSize(20)
  @IsString({ each: true })
  events!: string[];

  @Field(() => [ID], {
    nullable: true,
    description: 'Only events of these brands; none or empty: every brand you reach',
  })
  @IsOptional()
  @ArrayMaxSize(100)
  brandIds?: string[] | null;

  @Field(() => String, { nullable: true, description: 'A note to tell the webhook apart' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;
}

@InputType({ description: 'Changes to a webhook; fields left out stay as they are' })
export class UpdateWebhookInput {
  @Field(() => String, { nullable: true, description: 'A new endpoint URL' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  url?: string | null;

  @Field(() => [String], { nullable: true, description: 'The event types to receive from now on' })
  @IsOptional()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  events?: string[] | null;

  @Field(() => [ID], { nullable: true, description: 'Only events of these brands; empty: every brand you reach' })
  @IsOptional()
  @ArrayMaxSize(100)
  brandIds?: string[] | null;

  @Field(() => String, { nullable: true, description: 'A new note' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'False pauses deliveries; true enables it again (also after it was disabled for failing)',
  })
  @IsOptional()
  enabled?: boolean | null;
}

@ArgsType()
export class WebhookDeliveriesArgs extends ConnectionArgs {
  @Field(() => ID, { description: 'The webhook whose attempts to list, newest first' })
  webhookId!: string;
}
