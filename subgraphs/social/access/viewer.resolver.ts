import { Ctx, Field, ID, ObjectType, Query, Resolver } from 'type-graphql';
import type { AuthContext } from '../../../lib/shield.js';

@ObjectType({ description: 'The caller as the social service sees them' })
export class Viewer {
  @Field(() => ID) userId!: string;
  @Field(() => String, { nullable: true }) email!: string | null;
  @Field(() => [String], { nullable: true, description: 'Scopes the credential carries; null means every scope' })
  scopes!: string[] | null;
  @Field(() => String, { description: 'bearer or api-key' }) via!: string;
}

@Resolver()
export class ViewerResolver {
  @Query(() => Viewer)
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
