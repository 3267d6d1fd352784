import { AppError, ErrorCode } from '#lib/errors.js';
import { hasScope } from '#lib/identity.js';
import type { EntityReferences } from '#lib/subgraph/federated-schema.js';
import type { SocialContext } from './social.context.js';

/**
 * Entity references from other subgraphs (`_entities`). The shield lets `_entities` through and
 * puts no rule on the entity types (that would wrap every field of every list), so the scope
 * check happens here; reach (owner, API key brands) is applied by the services as always.
 */
function requireReferenceScope(ctx: SocialContext, scope: string): void {
  if (!ctx.principal) throw new AppError(ErrorCode.UNAUTHENTICATED, 'Authentication required');
  if (!hasScope(ctx.principal, scope))
    throw new AppError(ErrorCode.FORBIDDEN, `This operation needs the ${scope} scope`);
}

export const socialReferences: EntityReferences<SocialContext> = {
  Post: {
    __resolveReference(reference, ctx) {
      requireReferenceScope(ctx, 'posts.read');
      return ctx.posts.find(reference.id);
    },
  },
  Brand: {
    __resolveReference(reference, ctx) {
      requireReferenceScope(ctx, 'brands.read');
      return ctx.brandById.load(reference.id);
    },
  },
};
