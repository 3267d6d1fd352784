import type { Principal } from '../../../lib/identity.js';
import { ActorType, type Actor } from '../content/content-event.entity.js';

/** The 14 API key scopes of the social publishing service (the identity service's catalogue). */
export const SOCIAL_SCOPES = [
  'brands.read',
  'posts.read',
  'posts.write',
  'campaigns.read',
  'campaigns.write',
  'analytics.read',
  'media.read',
  'media.write',
  'suggestions.read',
  'suggestions.write',
  'settings.read',
  'settings.write',
  'integrations.read',
  'integrations.write',
] as const;

export type SocialScope = (typeof SOCIAL_SCOPES)[number];

export function isSocialScope(value: string): value is SocialScope {
  return (SOCIAL_SCOPES as readonly string[]).includes(value);
}

/**
 * Which data a caller may touch: always one owner's, and for an API key limited to some brands,
 * only those (`brandIds` null: every brand of the owner, `brand:*`).
 */
export interface Reach {
  ownerId: string;
  brandIds: ReadonlySet<string> | null;
}

export function reachOf(principal: Principal): Reach {
  return { ownerId: principal.userId, brandIds: principal.via === 'api-key' ? (principal.brandIds ?? null) : null };
}

export function reaches(reach: Reach, brandId: string): boolean {
  return reach.brandIds === null || reach.brandIds.has(brandId);
}

/** A MikroORM filter that keeps a query inside the caller's reach. */
export function reachFilter(reach: Reach): { ownerId: string; brandId?: { $in: string[] } } {
  return reach.brandIds === null ? { ownerId: reach.ownerId } : { ownerId: reach.ownerId, brandId: { $in: [...reach.brandIds] } };
}

export function actorOf(principal: Principal): Actor {
  return principal.via === 'api-key' && principal.apiKeyId
    ? { type: ActorType.api_key, id: principal.apiKeyId }
    : { type: ActorType.user, id: principal.userId };
}
