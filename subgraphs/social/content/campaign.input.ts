import { IsOptional, IsString, MaxLength } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';

@InputType({ description: 'Fields of a campaign; on update, omitted fields stay as they are' })
export class CampaignInput {
  @Field(() => ID, { nullable: true, description: 'Required on create when the caller has several brands' })
  @IsOptional()
  brandId?: string | null;

  @Field(() => String, { nullable: true, description: 'Name of the campaign (required on create)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string | null;

  @Field(() => String, { nullable: true, description: 'What the campaign is about; null clears it' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string | null;
}
