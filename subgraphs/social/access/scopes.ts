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
