import { IsOptional, IsString, MaxLength } from 'class-validator';
import { Field, ID, InputType, Int } from 'type-graphql';

@InputType({ description: 'A file the client is about to upload: its type and size are declared and enforced' })
export class MediaUploadInput {
  @Field(() => String)
  @IsString()
  @MaxLength(1000)
  filename!: string;

  @Field(() => String)
  @IsString()
  @MaxLength(200)
  contentType!: string;

  @Field(() => Int, { description: 'Exact size in bytes' })
  size!: number;

  @Field(() => ID, { nullable: true })
  @IsOptional()
  brandId?: string | null;
}

@InputType({ description: 'What image to generate' })
export class GenerateImageInput {
  @Field(() => String)
  @IsString()
  prompt!: string;

  @Field(() => String, { nullable: true, description: 'e.g. 1024x1024 (the default), 1536x1024, 1024x1536' })
  @IsOptional()
  size?: string | null;

  @Field(() => ID, { nullable: true })
  @IsOptional()
  brandId?: string | null;
}
