import { GraphQLLocalDate } from 'graphql-scalars';
import { Args, ArgsType, Ctx, Field, ID, Query, Resolver } from 'type-graphql';
import type { ContentContext } from './content.context.js';
import { DailyRollups } from './rollup.types.js';

@ArgsType()
class DailyArgs {
  @Field(() => GraphQLLocalDate, { nullable: true, description: 'First day (default: six days before `to`)' })
  from?: string;
  @Field(() => GraphQLLocalDate, { nullable: true, description: 'Last day, included (default: today)' }) to?: string;
  @Field(() => String, { nullable: true, description: 'IANA time zone of the days (default UTC)' }) timezone?: string;
  @Field(() => ID, { nullable: true, description: 'Only posts of this brand (default: every brand in reach)' })
  brandId?: string;
}

@Resolver()
export class RollupResolver {
  @Query(() => DailyRollups, { nullable: true, description: 'Per-day counts by status and platform; deterministic' })
  contentDaily(@Args(() => DailyArgs) args: DailyArgs, @Ctx() ctx: ContentContext) {
    return ctx.rollups.daily(args);
  }
}
