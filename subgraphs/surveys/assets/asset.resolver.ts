import { Arg, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { DOWNLOAD_URL_SECONDS } from './asset.service.js';
import { SurveyAssetUpload } from './asset.types.js';
import { SurveyAssetCommitInput, SurveyAssetPresignInput } from './asset.input.js';
import { SurveyAsset } from './survey-asset.entity.js';
import type { AssetsContext } from './assets.context.js';

@Resolver(() => SurveyAsset)
export class SurveyAssetResolver {
  @Query(() => SurveyAsset, { nullable: true, description: 'An asset of a survey the signed-in surveyor may see' })
  surveyAsset(@Arg('id', () => ID, { description: 'The asset' }) id: string, @Ctx() ctx: AssetsContext) {
    return ctx.assets.find(id);
  }

  @Mutation(() => SurveyAssetUpload, {
    nullable: true,
    description: 'Step one of an upload: records the asset and answers where to PUT its bytes',
  })
  presignSurveyAsset(
    @Arg('surveyId', () => ID, { description: 'The draft survey the asset is for' }) surveyId: string,
    @Arg('input', () => SurveyAssetPresignInput, { description: 'Name, type and exact size of the file' })
    input: SurveyAssetPresignInput,
    @Ctx() ctx: AssetsContext,
  ) {
    return ctx.assets.presign(surveyId, input);
  }

  @Mutation(() => SurveyAsset, {
    nullable: true,
    description: 'Step two: checks the uploaded bytes (size, type, checksum) and attaches the asset',
  })
  commitSurveyAsset(
    @Arg('surveyId', () => ID, { description: 'The survey the asset was presigned for' }) surveyId: string,
    @Arg('input', () => SurveyAssetCommitInput, { description: 'The asset to commit, and optionally its SHA-256' })
    input: SurveyAssetCommitInput,
    @Ctx() ctx: AssetsContext,
  ) {
    return ctx.assets.commit(surveyId, input);
  }

  @FieldResolver(() => String, {
    nullable: true,
    description: `A link to the bytes, valid for ${DOWNLOAD_URL_SECONDS / 60} minutes; null until committed`,
  })
  downloadUrl(@Root() asset: SurveyAsset, @Ctx() ctx: AssetsContext) {
    return ctx.assets.downloadUrl(asset);
  }

  @FieldResolver(() => Date, { nullable: true, description: 'When downloadUrl stops working' })
  downloadUrlExpiresAt(@Root() asset: SurveyAsset, @Ctx() ctx: AssetsContext): Date | null {
    return ctx.assets.downloadUrlExpiresAt(asset);
  }
}
