import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { Platform } from '../social.platforms.js';
import { Integration } from './integration.entity.js';
import type { IntegrationsContext } from './integrations.context.js';
import { IntegrationConnectStart, IntegrationConnectOutcome } from './integration.types.js';

@Resolver(() => Integration)
export class IntegrationResolver {
  @Query(() => [Integration], {
    nullable: true,
    description: "The calling user's connected platforms (never their tokens)",
  })
  integrations(@Ctx() ctx: IntegrationsContext) {
    return ctx.integrations.list();
  }

  @Query(() => [Platform], { nullable: true, description: 'Platforms this service is configured to connect' })
  integrationPlatforms(@Ctx() ctx: IntegrationsContext) {
    return ctx.integrations.available();
  }

  @Mutation(() => IntegrationConnectStart, {
    nullable: true,
    description: 'Starts the OAuth authorization-code flow (PKCE) for a platform',
  })
  startIntegrationConnect(
    @Arg('platform', () => Platform, {
      description: 'The platform to connect (one of integrationPlatforms; any other is NOT_FOUND)',
    })
    platform: Platform,
    @Arg('browserBinding', () => String, {
      description:
        'SHA-256 (hex) of a nonce kept in the starting browser (the REST connect route sets it as a cookie); the callback completes only with that nonce',
    })
    browserBinding: string,
    @Ctx() ctx: IntegrationsContext,
  ) {
    return ctx.integrations.startConnect(platform, browserBinding);
  }

  @Mutation(() => IntegrationConnectOutcome, {
    nullable: true,
    description:
      "Completes a connect from the platform's redirect. The single-use state is the credential: it is bound " +
      "to the user who started the connect and to that user's browser.",
  })
  completeIntegrationConnect(
    @Arg('platform', () => Platform, { description: 'The platform of the redirect' }) platform: Platform,
    @Arg('state', () => String, { nullable: true, description: 'The `state` query parameter of the redirect' })
    state: string | null,
    @Arg('code', () => String, { nullable: true, description: 'The `code` query parameter of the redirect' })
    code: string | null,
    @Arg('error', () => String, {
      nullable: true,
      description: 'The `error` query parameter of the redirect, when the user or platform declined',
    })
    error: string | null,
    @Arg('browserNonce', () => String, {
      nullable: true,
      description: 'The nonce of the browser that started the connect (its cookie); the state is bound to its hash',
    })
    browserNonce: string | null,
    @Ctx() ctx: IntegrationsContext,
  ) {
    return ctx.integrations.completeConnect(platform, { state, code, error, browserNonce });
  }
}
