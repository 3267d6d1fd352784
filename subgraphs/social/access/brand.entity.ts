import { randomUUID } from 'node:crypto';
import type { Opt } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Directive, Field, ID, Int, ObjectType } from 'type-graphql';
import { nextVersion, VERSION_DESCRIPTION } from '#lib/data/versions.js';

/** A brand (account identity) of one user; posts, campaigns and API key reach are per brand. */
@Entity({ tableName: 'brand' })
@ObjectType({ description: 'A brand of the calling user' })
@Directive('@key(fields: "id")')
export class Brand {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the brand' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Name of the brand' })
  name!: string;

  /** IANA zone the brand plans its days in (settings). */
  @Property({ type: 'text' })
  timezone: string = 'UTC';

  /** Local times of day (`HH:MM`) at which the brand usually posts (settings). */
  @Property({ type: 'text[]' })
  defaultPostingTimes: string[] = [];

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the brand was created' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the brand last changed' })
  updatedAt: Date = new Date();

  @Property({ type: 'integer', onUpdate: nextVersion })
  @Field(() => Int, { description: VERSION_DESCRIPTION })
  // Opt: a row written past the unit of work (a bulk insert) takes the column's default, 1.
  version: Opt<number> = 1;
}
