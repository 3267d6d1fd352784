import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Directive, Field, ID, ObjectType } from 'type-graphql';

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
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  firstName: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  lastName: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  email: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  phone: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  company: string | null = null;

  @Property({ type: 'text[]' })
  @Field(() => [String])
  tags: string[] = [];

  @Property({ type: 'boolean' })
  @Field(() => Boolean)
  deleted: boolean = false;

  @Property({ type: 'timestamptz', nullable: true })
  deletedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date)
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', onUpdate: () => new Date() })
  @Field(() => Date)
  updatedAt: Date = new Date();

  /**
   * Mapped only to keep it out of reads: lazy properties are left out of the select list, and an
   * unmapped column would be fetched by `select *` on every list (a tsvector is the widest column).
   * PostgreSQL maintains it (generated column), so it is never written.
   */
  @Property({ type: 'text', lazy: true, persist: false, nullable: true, hidden: true })
  searchVector?: string;
}
