import { ArrayMaxSize, ArrayMinSize, IsOptional, IsString, MaxLength } from 'class-validator';
import { ArgsType, Field, ID, InputType } from 'type-graphql';
import { ConnectionArgs } from '#lib/data/pagination.js';

@InputType({ description: 'A new pipeline and its stage names, in order' })
export class PipelineInput {
  @Field(() => String, { description: 'Name of the pipeline' })
  @IsString()
  @MaxLength(100)
  name!: string;

  @Field(() => [String], { description: 'Names of its stages, in order (at least one)' })
  @ArrayMinSize(1)
  @ArrayMaxSize(30)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  stages!: string[];
}

@InputType({ description: 'Where to move a contact' })
export class MoveInput {
  @Field(() => ID, { description: 'The stage to move the contact to' })
  @IsString()
  stageId!: string;

  @Field(() => ID, {
    nullable: true,
    description:
      "Names the stage's pipeline to move the contact into another pipeline; without it the stage must be in the contact's pipeline",
  })
  @IsOptional()
  @IsString()
  pipelineId?: string | null;
}

@ArgsType()
export class StageContactsArgs extends ConnectionArgs {}
