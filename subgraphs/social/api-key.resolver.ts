import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { ApiKey } from './api-key.entity.js';
import { CreateApiKeyInput, CreatedApiKey } from './api-key.input.js';
import type { SocialContext } from './social.context.js';

@Resolver(() => ApiKey)
export class ApiKeyResolver {
  @Query(() => [ApiKey], { description: 'Your API keys (never the keys themselves)' })
  apiKeys(@Ctx() ctx: SocialContext) {
    return ctx.apiKeys.list(ctx.signedIn());
  }

  @Mutation(() => CreatedApiKey, { description: 'Makes an API key (bearer token only); the key is in the answer this once' })
  createApiKey(@Arg('input', () => CreateApiKeyInput, { description: 'Name, scopes and brand reach of the key' }) input: CreateApiKeyInput, @Ctx() ctx: SocialContext) {
    return ctx.apiKeys.create(ctx.signedIn(), input);
  }

  @Mutation(() => ApiKey, { description: 'Revokes an API key at once (bearer token only)' })
  revokeApiKey(@Arg('id', () => ID, { description: 'The key to revoke (its id, not the key)' }) id: string, @Ctx() ctx: SocialContext) {
    return ctx.apiKeys.revoke(ctx.signedIn(), id);
  }
}
