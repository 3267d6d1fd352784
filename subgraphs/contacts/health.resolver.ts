import { Ctx, Field, ObjectType, Query, Resolver } from 'type-graphql';
import { databaseCheck, HealthCheckResult, runHealthChecks } from '../../lib/health.js';
import type { ContactsContext } from './contacts.context.js';

@ObjectType({ description: 'Health of the contact management service: its database' })
export class ContactsHealth {
  @Field(() => Boolean, { description: 'True when every check passed' }) ok!: boolean;
  @Field(() => [HealthCheckResult], { description: 'Each part checked, with its verdict' }) checks!: HealthCheckResult[];
}

@Resolver()
export class HealthResolver {
  @Query(() => ContactsHealth, { description: 'The database of the contact management service (public: names and verdicts only), behind its /health and /readyz' })
  contactsHealth(@Ctx() ctx: ContactsContext) {
    return runHealthChecks([databaseCheck(ctx.em)]);
  }
}
