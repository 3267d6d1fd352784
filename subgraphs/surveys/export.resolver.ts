import { Arg, Ctx, ID, Query, Resolver } from 'type-graphql';
import { EXPORT_LINK_SECONDS } from './asset.service.js';
import { parseExportFormat, renderSurvey } from './export.service.js';
import { EXPORT_FORMATS, SurveyExport } from './export.types.js';
import type { SurveysContext } from './surveys.context.js';

@Resolver()
export class SurveyExportResolver {
  @Query(() => [String], { description: 'Formats a survey can be exported in' })
  surveyExportFormats(): string[] {
    return [...EXPORT_FORMATS];
  }

  @Query(() => SurveyExport, { description: 'A survey as a document: html (printable), markdown, or whatsapp (a chat message)' })
  async surveyExport(@Arg('id', () => ID) id: string, @Arg('format', () => String, { nullable: true }) format: string | null, @Ctx() ctx: SurveysContext) {
    const exportFormat = parseExportFormat(format);
    const survey = await ctx.surveys.get(id);
    const assets = await ctx.committedAssetsBySurvey.load(survey.id);
    const linked = await Promise.all(
      assets.map(async (asset) => ({
        filename: asset.filename,
        contentType: asset.contentType,
        url: await ctx.assets.downloadUrl(asset, EXPORT_LINK_SECONDS),
      })),
    );
    return renderSurvey(survey, linked, exportFormat);
  }
}
