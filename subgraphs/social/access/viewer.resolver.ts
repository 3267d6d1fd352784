import { Ctx, Field, ID, ObjectType, Query, Resolver } from 'type-graphql';
import type { AuthContext } from '#lib/subgraph/shield.js';

@ObjectType({ description: 'The caller as the social service sees them' })
export class Viewer {
  @Field(() => ID, { description: "The user the credential acts for (the token's sub, or the key's owner)" })
  userId!: string;
  @Field(() => String, { nullable: true, description: "The user's e-mail address, when the token carries one" })
  email!: string | null;
  @Field(() => [String], { nullable: true, description: 'Scopes the credential carries; null means every scope' })
  scopes!: string[] | null;
  @Field(() => String, { description: 'bearer or api-key' }) via!: string;
}

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
