import { IsOptional, IsString, MaxLength } from 'class-validator';
import { Field, ID, InputType, Int } from 'type-graphql';

@InputType({ description: 'A file the client is about to upload: its type and size are declared and enforced' })
export class MediaUploadInput {
  @Field(() => String, { description: 'Name of the file' })
  @IsString()
  @MaxLength(1000)
  filename!: string;

  @Field(() => String, { description: 'Media type of the file (an image or video type)' })
  @IsString()
  @MaxLength(200)
  contentType!: string;

  @Field(() => Int, { description: 'Exact size in bytes' })
  size!: number;

  @Field(() => ID, { nullable: true, description: 'The brand the file is for' })
  @IsOptional()
  brandId?: string | null;
}

@InputType({ description: 'What image to generate' })
export class GenerateImageInput {
  @Field(() => String, { description: 'What the image should show' })
  @IsString()
  prompt!: string;

  @Field(() => String, { nullable: true, description: 'e.g. 1024x1024 (the default), 1536x1024, 1024x1536' })
  @IsOptional()
  size?: string | null;

  @Field(() => ID, {
    nullable: true,
    description: 'The brand the image is for; required when the caller has several brands',
  })
  @IsOptional()
  brandId?: string | null;
}
