import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'Counts of one calendar day' })
export class DayRollup {
  @Field(() => String, { description: 'YYYY-MM-DD in the rollup time zone' }) date!: string;
  @Field(() => Int) total!: number;
  @Field(() => GraphQLJSONObject, { description: 'Posts per status; every status is listed' }) byStatus!: Record<string, number>;
  @Field(() => GraphQLJSONObject, { description: 'Posts per target platform (a post counts once per platform)' }) byPlatform!: Record<string, number>;
}

@ObjectType({ description: 'Daily rollups over a range of calendar days in one IANA time zone' })
export class DailyRollups {
  @Field(() => String) timezone!: string;
  @Field(() => String) from!: string;
  @Field(() => String) to!: string;
  @Field(() => [DayRollup]) days!: DayRollup[];
}
