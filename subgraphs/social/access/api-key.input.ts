import { ArrayMaxSize, IsOptional, IsString, MaxLength } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';

@InputType({ description: 'A new API key: its scopes (a subset of the 14) and the brands it reaches' })
export class CreateApiKeyInput {
  @Field(() => String, { description: 'A name to tell the key apart from your other keys' })
  @IsString()
  @MaxLength(200)
  name!: string;

  @Field(() => [String], {
    description: 'Scopes such as posts.read; brand:* or brand:<id> entries set the brand reach too',
  })
  @ArrayMaxSize(64)
  @IsString({ each: true })
  scopes!: string[];

  @Field(() => [ID], { nullable: true, description: 'Brands the key reaches; none or empty: every brand (brand:*)' })
  @IsOptional()
  @ArrayMaxSize(100)
  brandIds?: string[] | null;
}
