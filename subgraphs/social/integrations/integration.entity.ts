import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';

export enum IntegrationStatus {
  connected = 'connected',
  /** The platform definitely refused the stored credentials; only a new connect helps. */
  needs_reconnect = 'needs_reconnect',
}

registerEnumType(IntegrationStatus, { name: 'IntegrationStatus' });

/**
 * A user's connected account on one social platform. Tokens are stored sealed (see
 * token-cipher.ts) and are never exposed as GraphQL fields.
 */
@Entity({ tableName: 'integration' })
@ObjectType({ description: 'A connected social platform account of the calling user (never its tokens)' })
export class Integration {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'text' })
  @Field(() => String)
  platform!: string;

  @Property({ type: 'text' })
  @Field(() => IntegrationStatus)
  status: IntegrationStatus = IntegrationStatus.connected;

  @Property({ type: 'text' })
  @Field(() => String, { description: "The account's id on the platform" })
  accountId!: string;

  @Property({ type: 'text' })
  @Field(() => String)
  accountName!: string;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  accountUrl: string | null = null;

  @Property({ type: 'text' })
  accessTokenSealed!: string;

  @Property({ type: 'text', nullable: true })
  refreshTokenSealed: string | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the access token expires; null when it does not' })
  tokenExpiresAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  scope: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'The last problem talking to the platform, if any' })
  lastError: string | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  lastRefreshedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date)
  connectedAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field(() => Date)
  updatedAt: Date = new Date();
}
