import { Ctx, Query, Resolver } from 'type-graphql';
import type { HealthContext } from './health.context.js';
import { runHealthChecks, SocialHealth } from './health-checks.js';

@Resolver()
export class HealthResolver {
  @Query(() => SocialHealth, {
    nullable: true,
    description: 'Database, storage and job queue of the social service (public: names and verdicts only)',
  })
  socialHealth(@Ctx() ctx: HealthContext) {
    return runHealthChecks(ctx.healthChecks);
  }
}
