import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType } from 'type-graphql';
import { ConnectionType, PageType } from '#lib/data/pagination.js';
import { MediaFile } from './media.entity.js';

@ObjectType({ description: 'Where and how to upload the bytes of a declared media file' })
export class MediaUploadGrant {
  @Field(() => ID, { description: 'Id of the declared media file' }) id!: string;
  @Field(() => String, { description: 'Signed URL to send the bytes to' }) uploadUrl!: string;
  @Field(() => String, { description: 'HTTP method of the upload (PUT)' }) method!: string;
  @Field(() => GraphQLJSONObject, { description: 'Headers the upload must carry' }) headers!: Record<string, string>;
  @Field(() => Date, { description: 'Until when the upload URL works' }) expiresAt!: Date;
}

export const MediaFileConnection = ConnectionType(MediaFile, 'MediaFile');
export const MediaFilePage = PageType(MediaFile, 'MediaFile');
