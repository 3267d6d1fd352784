import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'An HTTP header the upload must carry' })
export class SurveyUploadHeader {
  @Field(() => String, { description: 'Header name' }) name!: string;
  @Field(() => String, { description: 'Header value' }) value!: string;
}

@ObjectType({ description: 'Where and how to send the bytes of a presigned asset' })
export class SurveyAssetUpload {
  @Field(() => ID, { description: 'Id of the new asset: commit it once the bytes are sent' }) assetId!: string;
  @Field(() => String, { description: 'Signed URL to send the bytes to' }) uploadUrl!: string;
  @Field(() => String, { description: 'HTTP method of the upload (PUT)' }) method!: string;
  @Field(() => [SurveyUploadHeader], { description: 'Headers the upload must carry' }) headers!: SurveyUploadHeader[];
  @Field(() => Date, { description: 'Until when the upload URL works' }) expiresAt!: Date;
}
