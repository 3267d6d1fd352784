import { hasScope } from '../../lib/identity.js';
import { AppError, ErrorCode } from '../../lib/errors.js';
import type { Brand } from './access/brand.entity.js';
import type { Post } from './content/post.entity.js';
import type { SocialContext } from './social.context.js';

/**
 * Entity references from other subgraphs (`_entities`). The shield lets `_entities` through and
 * puts no rule on the entity types (that would wrap every field of every list), so the scope
 * check happens here; reach (owner, API key brands) is applied by the services as always.
 */
function requireReferenceScope(ctx: SocialContext, scope: string): void {
  const principal = ctx.signedIn();
  if (!hasScope(principal, scope)) throw new AppError(ErrorCode.FORBIDDEN, `This operation needs the ${scope} scope`);
}

export const socialReferences = {
  Post: {
    __resolveReference(reference: Pick<Post, 'id'>, ctx: SocialContext) {
      requireReferenceScope(ctx, 'posts.read');
      return ctx.posts.find(reference.id);
    },
  },
  Brand: {
    __resolveReference(reference: Pick<Brand, 'id'>, ctx: SocialContext) {
      requireReferenceScope(ctx, 'brands.read');
      return ctx.loaders.brandById.load(reference.id);
    },
  },
};
