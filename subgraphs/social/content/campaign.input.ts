import { IsOptional, IsString, MaxLength } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';

@InputType({ description: 'Fields of a campaign to change; omitted fields stay as they are' })
export class UpdateCampaignInput {
  @Field(() => ID, {
    nullable: true,
    description: 'Required on create when the caller has several brands; on update, moves the campaign',
  })
  @IsOptional()
  brandId?: string | null;

  @Field(() => String, { nullable: true, description: 'Name of the campaign' })
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

/** Fields of a new campaign: those of an update with `name` required. */
@InputType({ description: 'Fields of a new campaign' })
export class CreateCampaignInput extends UpdateCampaignInput {
  declare name: string;
}
// Non-null on create; its checks (text, length) are the update's. A decorator cannot sit on a
// `declare`d field, and a redeclared one would replace the value GraphQL set.
Field(() => String, { description: 'Name of the campaign' })(CreateCampaignInput.prototype, 'name');
