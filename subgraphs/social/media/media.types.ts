import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'Where and how to upload the bytes of a declared media file' })
export class MediaUploadGrant {
  @Field(() => ID) id!: string;
  @Field(() => String) uploadUrl!: string;
  @Field(() => String) method!: string;
  @Field(() => GraphQLJSONObject, { description: 'Headers the upload must carry' }) headers!: Record<string, string>;
  @Field(() => Date) expiresAt!: Date;
}
