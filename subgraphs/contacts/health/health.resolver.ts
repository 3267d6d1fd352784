import { Ctx, Query, Resolver } from 'type-graphql';
import { databaseCheck, runHealthChecks, ServiceHealth } from '#lib/data/health.js';
import type { HealthContext } from './health.context.js';

@Resolver()
export class HealthResolver {
  @Query(() => ServiceHealth, {
    nullable: true,
    description:
      'The database of the contact management service (public: names and verdicts only), behind its /health and /readyz',
  })
  contactsHealth(@Ctx() ctx: HealthContext) {
    return runHealthChecks([databaseCheck(ctx.em)]);
  }
}
