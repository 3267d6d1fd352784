import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';

/**
 * An API key of one user. Only the SHA-256 of the key is stored: the key is 32 random bytes, so
 * a fast hash is enough (nothing to brute-force) and a lookup by hash stays one indexed query.
 */
@Entity({ tableName: 'api_key' })
@ObjectType({ description: 'An API key (the key itself is shown only once, when it is made)' })
export class ApiKey {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the key record (not the key: that was shown once, when it was made)' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'A name the owner gave the key, to tell keys apart' })
  name!: string;

  @Property({ type: 'text' })
  keyHash!: string;

  /** The first characters of the key, so a person can tell their keys apart. */
  @Property({ type: 'text' })
  @Field(() => String, { description: 'The first characters of the key, to recognise it without revealing it' })
  prefix!: string;

  @Property({ type: 'text[]' })
  @Field(() => [String], { description: 'Scopes the key carries (a subset of the 14), e.g. posts.read' })
  scopes: string[] = [];

  /** Brands the key reaches; null is `brand:*` (every brand of the owner). */
  @Property({ type: 'uuid[]', nullable: true })
  @Field(() => [ID], {
    nullable: true,
    description: 'Brands the key reaches; null means every brand of the owner (brand:*)',
  })
  brandIds: string[] | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When a request last came with this key; null when never' })
  lastUsedAt: Date | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the key was revoked; null while it works' })
  revokedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the key was made' })
  createdAt: Date = new Date();
}
