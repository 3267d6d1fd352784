import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { ApiKey } from './api-key.entity.js';
import { CreateApiKeyInput } from './api-key.input.js';
import { CreatedApiKey } from './api-key.types.js';
import type { AccessContext } from './access.context.js';
import { answerHoldsSecret } from '#lib/subgraph/idempotent-operations.js';

@Resolver(() => ApiKey)
export class ApiKeyResolver {
  @Query(() => [ApiKey], { nullable: true, description: 'Your API keys (never the keys themselves)' })
  apiKeys(@Ctx() ctx: AccessContext) {
    return ctx.apiKeys.list();
  }

  @Mutation(() => CreatedApiKey, {
    nullable: true,
    description: 'Makes an API key (bearer token only); the key is in the answer this once',
  })
  createApiKey(
    @Arg('input', () => CreateApiKeyInput, { description: 'Name, scopes and brand reach of the key' })
    input: CreateApiKeyInput,
    @Ctx() ctx: AccessContext,
  ) {
    // The new key is shown this once: never kept for an Idempotency-Key's replay.
    answerHoldsSecret(ctx);
    return ctx.apiKeys.create(input);
  }

  @Mutation(() => ApiKey, { nullable: true, description: 'Revokes an API key at once (bearer token only)' })
  revokeApiKey(
    @Arg('id', () => ID, { description: 'The key to revoke (its id, not the key)' }) id: string,
    @Ctx() ctx: AccessContext,
  ) {
    return ctx.apiKeys.revoke(id);
  }
}
