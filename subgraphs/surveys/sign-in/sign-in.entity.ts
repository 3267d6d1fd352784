import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/** A mailed sign-in link. Only the token's SHA-256 is kept: the link in the mail is the secret. */
@Entity({ tableName: 'magic_link' })
export class MagicLink {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  email!: string;

  @Property({ type: 'text', unique: true })
  tokenHash!: string;

  @Property({ type: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  usedAt: Date | null = null;

  /** Set when another link of the same address was spent (a sign-in ends the others). */
  @Property({ type: 'timestamptz', nullable: true })
  voidedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}

/** A signed-in browser or device; the opaque token is sent as a bearer token or cookie, stored hashed. */
@Entity({ tableName: 'user_session' })
export class UserSession {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  email!: string;

  @Property({ type: 'text', unique: true })
  tokenHash!: string;

  @Property({ type: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
