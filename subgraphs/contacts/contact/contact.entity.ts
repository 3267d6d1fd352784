import { randomUUID } from 'node:crypto';
import type { Opt } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Directive, Field, ID, Int, ObjectType } from 'type-graphql';
import { nextVersion, VERSION_DESCRIPTION } from '#lib/data/versions.js';

/**
 * A person the sales team works with. Deleting one only sets `deleted`: the record stays for
 * history, but it leaves every list and lookup. `search_vector` (names, e-mail, company, tags)
 * is a generated column maintained by PostgreSQL.
 */
@Entity({ tableName: 'contact' })
@ObjectType({ description: 'A contact of the sales team' })
@Directive('@key(fields: "id")')
export class Contact {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the contact' })
  id: string = randomUUID();

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Given name; a contact needs a first name or an e-mail address' })
  firstName: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Family name' })
  lastName: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, {
    nullable: true,
    description: 'E-mail address, unique among live contacts; imports match on it',
  })
  email: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Phone number, as entered' })
  phone: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Company the contact works for' })
  company: string | null = null;

  @Property({ type: 'text[]' })
  @Field(() => [String], { description: 'Free labels for grouping and search, e.g. vip' })
  tags: string[] = [];

  @Property({ type: 'boolean' })
  @Field(() => Boolean, { description: 'True once soft deleted: the record stays but leaves every list' })
  deleted: boolean = false;

  @Property({ type: 'timestamptz', nullable: true })
  deletedAt: Date | null = null;

  @Property({ type: 'uuid', nullable: true })
  @Field(() => ID, {
    nullable: true,
    description: 'The contact this one was merged into (it is then deleted, and still readable by id); null otherwise',
  })
  mergedInto: string | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the contact was created' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', onUpdate: () => new Date() })
  @Field(() => Date, { description: 'When the contact last changed' })
  updatedAt: Date = new Date();

  @Property({ type: 'integer', onUpdate: nextVersion })
  @Field(() => Int, { description: VERSION_DESCRIPTION })
  // Opt: a row written past the unit of work (a bulk insert) takes the column's default, 1.
  version: Opt<number> = 1;

  /**
   * Mapped only to keep it out of reads: lazy properties are left out of the select list, and an
   * unmapped column would be fetched by `select *` on every list (a tsvector is the widest column).
   * PostgreSQL maintains it (generated column), so it is never written.
   */
  @Property({ type: 'text', lazy: true, persist: false, nullable: true, hidden: true })
  searchVector?: string;
}
