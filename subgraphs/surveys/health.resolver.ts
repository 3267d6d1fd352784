import { Ctx, Field, ObjectType, Query, Resolver } from 'type-graphql';
import { databaseCheck, HealthCheckResult, runHealthChecks } from '../../lib/health.js';
import type { SurveysContext } from './surveys.context.js';

@ObjectType({ description: 'Health of the venue survey service: its database' })
export class SurveysHealth {
  @Field(() => Boolean, { description: 'True when every check passed' }) ok!: boolean;
  @Field(() => [HealthCheckResult], { description: 'Each part checked, with its verdict' }) checks!: HealthCheckResult[];
}

@Resolver()
export class HealthResolver {
  @Query(() => SurveysHealth, { description: 'The database of the venue survey service (public: names and verdicts only), behind its /health and /readyz' })
  surveysHealth(@Ctx() ctx: SurveysContext) {
    return runHealthChecks([databaseCheck(ctx.em)]);
  }
}
