import { Arg, Ctx, Field, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { Integration } from './integration.entity.js';
import type { IntegrationsContext } from './integrations.context.js';

@ObjectType({ description: 'Where to send the browser to authorize the platform, and until when that link works' })
export class IntegrationConnectStart {
  @Field(() => String) authorizeUrl!: string;
  @Field(() => Date) expiresAt!: Date;
}

@ObjectType({ description: 'How a connect ended, and where the browser goes next' })
export class IntegrationConnectOutcome {
  @Field(() => Integration, { nullable: true, description: 'The connected account; null when the user or platform declined' })
  integration!: Integration | null;

  @Field(() => String, { description: 'The web app page that tells the user how it went' })
  redirectUrl!: string;
}

@Resolver(() => Integration)
export class IntegrationResolver {
  @Query(() => [Integration], { description: "The calling user's connected platforms (never their tokens)" })
  integrations(@Ctx() ctx: IntegrationsContext) {
    return ctx.integrations.list();
  }

  @Query(() => [String], { description: 'Platforms this service is configured to connect' })
  integrationPlatforms(@Ctx() ctx: IntegrationsContext) {
    return ctx.integrations.available();
  }

  @Mutation(() => IntegrationConnectStart, { description: 'Starts the OAuth authorization-code flow (PKCE) for a platform' })
  startIntegrationConnect(@Arg('platform', () => String) platform: string, @Ctx() ctx: IntegrationsContext) {
    return ctx.integrations.startConnect(platform);
  }

  @Mutation(() => IntegrationConnectOutcome, {
    description: "Completes a connect from the platform's redirect. The single-use state is the credential: it is bound to the user who started the connect.",
  })
  completeIntegrationConnect(
    @Arg('platform', () => String) platform: string,
    @Arg('state', () => String, { nullable: true }) state: string | null,
    @Arg('code', () => String, { nullable: true }) code: string | null,
    @Arg('error', () => String, { nullable: true }) error: string | null,
    @Ctx() ctx: IntegrationsContext,
  ) {
    return ctx.integrations.completeConnect(platform, { state, code, error });
  }
}
