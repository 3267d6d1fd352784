import { Arg, Ctx, ID, Query, Resolver } from 'type-graphql';
import { EXPORT_FORMATS, SurveyExport } from './export.types.js';
import type { SurveysContext } from './surveys.context.js';

@Resolver()
export class SurveyExportResolver {
  @Query(() => [String], { nullable: true, description: 'Formats a survey can be exported in' })
  surveyExportFormats(): string[] {
    return [...EXPORT_FORMATS];
  }

  @Query(() => SurveyExport, {
    nullable: true,
    description: 'A survey as a document: html (printable), markdown, or whatsapp (a chat message)',
  })
  surveyExport(
    @Arg('id', () => ID, { description: 'The survey to export' }) id: string,
    @Arg('format', () => String, { nullable: true, description: 'html (the default), markdown or whatsapp' })
    format: string | null,
    @Ctx() ctx: SurveysContext,
  ) {
    return ctx.exports.export(id, format);
  }
}
