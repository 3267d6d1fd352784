import { Ctx, Query, Resolver } from 'type-graphql';
import type { AuthContext } from '#lib/subgraph/shield.js';
import { Viewer } from './viewer.types.js';

@Resolver()
export class ViewerResolver {
  @Query(() => Viewer, {
    nullable: true,
    description: 'Who the credential of this request acts for, and with which scopes',
  })
  viewer(@Ctx() ctx: AuthContext): Viewer {
    const principal = ctx.principal!;
    return {
      userId: principal.userId,
      email: principal.email ?? null,
      scopes: principal.scopes ? [...principal.scopes].sort() : null,
      via: principal.via,
    };
  }
}
