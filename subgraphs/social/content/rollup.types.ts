import { GraphQLJSONObject, GraphQLLocalDate } from 'graphql-scalars';
import { Field, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'Counts of one calendar day' })
export class DayRollup {
  @Field(() => GraphQLLocalDate, { description: 'The day in the rollup time zone' }) date!: string;
  @Field(() => Int, { description: 'Posts scheduled or published that day' }) total!: number;
  @Field(() => GraphQLJSONObject, { description: 'Posts per status; every status is listed' }) byStatus!: Record<
    string,
    number
  >;
  @Field(() => GraphQLJSONObject, { description: 'Posts per target platform (a post counts once per platform)' })
  byPlatform!: Record<string, number>;
}

@ObjectType({ description: 'Daily rollups over a range of calendar days in one IANA time zone' })
export class DailyRollups {
  @Field(() => String, { description: 'IANA time zone the days are counted in' }) timezone!: string;
  @Field(() => GraphQLLocalDate, { description: 'First day of the range' }) from!: string;
  @Field(() => GraphQLLocalDate, { description: 'Last day of the range, included' }) to!: string;
  @Field(() => [DayRollup], { description: 'One entry per day of the range, in order, days without posts included' })
  days!: DayRollup[];
}
