import { ArrayMaxSize, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';

@InputType({ description: 'A new brand' })
export class BrandInput {
  @Field(() => String, { nullable: true, description: 'Name of the new brand (required)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string | null;

  @Field(() => String, { nullable: true, description: 'IANA time zone, default UTC' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  timezone?: string | null;
}

@InputType({ description: 'Brand settings; omitted fields stay as they are' })
export class BrandSettingsInput {
  @Field(() => String, { nullable: true, description: 'IANA time zone' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  timezone?: string | null;

  @Field(() => [String], {
    nullable: true,
    description: 'Local times of day (HH:MM, 24-hour) the brand usually posts at',
  })
  @IsOptional()
  @ArrayMaxSize(24)
  @Matches(/^([01]\d|2[0-3]):[0-5]\d$/, { each: true, message: 'each time must be HH:MM (24-hour)' })
  defaultPostingTimes?: string[] | null;
}
