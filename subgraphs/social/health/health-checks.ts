import { Field, ObjectType } from 'type-graphql';
import { HealthCheckResult } from '#lib/data/health.js';

export { runHealthChecks, type HealthCheck } from '#lib/data/health.js';

@ObjectType({ description: 'Health of the social service and the parts it depends on' })
export class SocialHealth {
  @Field(() => Boolean, { description: 'True when every check passed' }) ok!: boolean;
  @Field(() => [HealthCheckResult], { description: 'Each part checked, with its verdict' })
  checks!: HealthCheckResult[];
}
