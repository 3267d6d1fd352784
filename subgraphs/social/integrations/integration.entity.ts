import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { Platform } from '../social.platforms.js';

export enum IntegrationStatus {
  CONNECTED = 'connected',
  /** The platform definitely refused the stored credentials; only a new connect helps. */
  NEEDS_RECONNECT = 'needs_reconnect',
}

registerEnumType(IntegrationStatus, {
  name: 'IntegrationStatus',
  description: 'Whether a connected platform account still works',
  valuesConfig: {
    NEEDS_RECONNECT: { description: 'The platform refused the stored credentials: the user must connect again' },
  },
});

/**
 * A user's connected account on one social platform. Tokens are stored sealed (see
 * token-cipher.ts) and are never exposed as GraphQL fields.
 */
@Entity({ tableName: 'integration' })
@ObjectType({ description: 'A connected social platform account of the calling user (never its tokens)' })
export class Integration {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the connection' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'text' })
  @Field(() => Platform, { description: 'The platform of the account' })
  platform!: Platform;

  @Property({ type: 'text' })
  @Field(() => IntegrationStatus, { description: 'Whether the connection works or needs the user to connect again' })
  status: IntegrationStatus = IntegrationStatus.CONNECTED;

  @Property({ type: 'text' })
  @Field(() => String, { description: "The account's id on the platform" })
  accountId!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: "The account's display or user name on the platform" })
  accountName!: string;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, {
    nullable: true,
    description: "Link to the account's profile; null when the platform gives none",
  })
  accountUrl: string | null = null;

  @Property({ type: 'text' })
  accessTokenSealed!: string;

  @Property({ type: 'text', nullable: true })
  refreshTokenSealed: string | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the access token expires; null when it does not' })
  tokenExpiresAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Permissions the platform granted, as it names them' })
  scope: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'The last problem talking to the platform, if any' })
  lastError: string | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the access token was last renewed; null when never' })
  lastRefreshedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the account was connected' })
  connectedAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the connection last changed' })
  updatedAt: Date = new Date();
}
