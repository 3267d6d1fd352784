import { ArrayMaxSize, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { ArgsType, Field, ID, InputType, Int } from 'type-graphql';
import { ConnectionArgs, PageArgs } from '#lib/data/pagination.js';
import { SurveyStatus } from './survey.entity.js';

const TEXT_MAX = 300;

/** Fields a surveyor may change; omitted fields stay as they are and null clears one. */
@InputType({ description: 'Fields of a survey to change; omitted fields stay as they are and null clears one' })
export class UpdateSurveyInput {
  @Field(() => String, { nullable: true, description: 'Name of the venue (never cleared)' })
  @IsOptional()
  @IsString()
  @MaxLength(TEXT_MAX)
  venueName?: string | null;

  @Field(() => String, { nullable: true, description: 'Address of the venue' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  address?: string | null;

  @Field(() => String, { nullable: true, description: 'Name of the person to contact at the venue' })
  @IsOptional()
  @IsString()
  @MaxLength(TEXT_MAX)
  contactName?: string | null;

  @Field(() => String, { nullable: true, description: 'Phone number of that person' })
  @IsOptional()
  @IsString()
  @MaxLength(50)
  contactPhone?: string | null;

  @Field(() => Int, { nullable: true, description: 'How many guests the venue holds (0 or more)' })
  @IsOptional()
  @IsInt()
  @Min(0, { message: 'capacity must not be negative' })
  @Max(1_000_000)
  capacity?: number | null;

  @Field(() => [String], {
    nullable: true,
    description: 'Amenities the venue offers; the list replaces the previous one',
  })
  @IsOptional()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  amenities?: string[] | null;

  @Field(() => String, { nullable: true, description: 'Free notes' })
  @IsOptional()
  @IsString()
  @MaxLength(20_000)
  notes?: string | null;

  @Field(() => ID, { nullable: true, description: 'Id of a contact of the contacts service' })
  @IsOptional()
  @IsUUID('all', { message: 'contactId must be a UUID' })
  contactId?: string | null;
}

/** Fields of a new survey: those of an update with `venueName` required. */
@InputType({ description: 'Fields of a new survey' })
export class CreateSurveyInput extends UpdateSurveyInput {
  declare venueName: string;
}
// Non-null on create; its checks (text, length) are the update's. A decorator cannot sit on a
// `declare`d field, and a redeclared one would replace the value GraphQL set.
Field(() => String, { description: 'Name of the venue' })(CreateSurveyInput.prototype, 'venueName');

@ArgsType()
export class SurveyPageArgs extends PageArgs {
  @Field(() => SurveyStatus, { nullable: true, description: 'Only surveys in this state' })
  status?: SurveyStatus;
}

@ArgsType()
export class SurveyConnectionArgs extends ConnectionArgs {
  @Field(() => SurveyStatus, { nullable: true, description: 'Only surveys in this state' })
  status?: SurveyStatus;
}
