import { Ctx, Query, Resolver } from 'type-graphql';
import { runHealthChecks, SocialHealth } from './health-checks.js';
import type { SocialContext } from '../social.context.js';

@Resolver()
export class HealthResolver {
  @Query(() => SocialHealth, { description: 'Database, storage and job queue of the social service (public: names and verdicts only)' })
  socialHealth(@Ctx() ctx: SocialContext) {
    return runHealthChecks(ctx.runtime.healthChecks);
  }
}
