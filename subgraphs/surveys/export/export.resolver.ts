import { Arg, Ctx, ID, Query, Resolver } from 'type-graphql';
import { EXPORT_FORMATS, SurveyExport, SurveyExportFormat, type ExportFormat } from './export.types.js';
import type { ExportContext } from './export.context.js';

@Resolver()
export class SurveyExportResolver {
  @Query(() => [SurveyExportFormat], { nullable: true, description: 'Formats a survey can be exported in' })
  surveyExportFormats(): ExportFormat[] {
    return [...EXPORT_FORMATS];
  }

  @Query(() => SurveyExport, {
    nullable: true,
    description: 'A survey as a document: html (printable), markdown, or whatsapp (a chat message)',
  })
  surveyExport(
    @Arg('id', () => ID, { description: 'The survey to export' }) id: string,
    @Arg('exportFormat', () => SurveyExportFormat, {
      nullable: true,
      description: 'The format to render (required unless the deprecated format is given)',
    })
    exportFormat: SurveyExportFormat | null,
    // Kept for the REST route, whose contract takes the format as text (any case, 400 listing the formats).
    @Arg('format', () => String, {
      nullable: true,
      description: 'The format as text: html, markdown or whatsapp',
      deprecationReason: 'Use exportFormat',
    })
    format: string | null,
    @Ctx() ctx: ExportContext,
  ) {
    return ctx.exports.export(id, format ?? exportFormat);
  }
}
