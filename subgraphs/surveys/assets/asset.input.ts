import { IsInt, IsOptional, IsString, IsUUID, Matches, MaxLength, Min, MinLength } from 'class-validator';
import { Field, ID, InputType, Int } from 'type-graphql';

@InputType({ description: 'The file a client is about to upload' })
export class SurveyAssetPresignInput {
  @Field(() => String, { description: 'Name of the file' })
  @IsString()
  @MinLength(1, { message: 'filename must not be empty' })
  @MaxLength(255)
  // Control characters would end up in headers (Content-Disposition) and exports.
  @Matches(/^[^\p{Cc}/\\]+$/u, { message: 'filename must not contain control characters or slashes' })
  filename!: string;

  @Field(() => String, { description: 'An image type (jpeg, png, gif, webp, heic, heif, avif) or application/pdf' })
  @IsString()
  @MaxLength(100)
  contentType!: string;

  @Field(() => Int, { description: 'Exact size of the file in bytes' })
  @IsInt()
  @Min(1, { message: 'size must be at least 1 byte' })
  size!: number;
}

@InputType({ description: 'Which presigned asset to check and attach' })
export class SurveyAssetCommitInput {
  @Field(() => ID, { description: 'The assetId the presign answered' })
  @IsUUID('all', { message: 'assetId must be a UUID' })
  assetId!: string;

  @Field(() => String, {
    nullable: true,
    description: 'SHA-256 of the file (hex); when given, the stored bytes must match it',
  })
  @IsOptional()
  @Matches(/^[0-9a-fA-F]{64}$/, { message: 'sha256 must be 64 hexadecimal characters' })
  sha256?: string | null;
}
