import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import type { Platform } from '../social.platforms.js';

/**
 * One pending OAuth connect: the `state` sent to the platform (kept only as its hash), the user it
 * is bound to, and the PKCE verifier (sealed). The platform's callback carries no bearer token, so
 * this row is what ties it back to the user. It is claimed once, atomically, and expires quickly.
 */
@Entity({ tableName: 'oauth_state' })
export class PendingConnect {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  stateHash!: string;

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'text' })
  platform!: Platform;

  @Property({ type: 'text' })
  codeVerifierSealed!: string;

  @Property({ type: 'text' })
  redirectUri!: string;

  @Property({ type: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  usedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
