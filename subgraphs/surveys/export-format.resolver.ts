import { Query, Resolver } from 'type-graphql';

export const EXPORT_FORMATS = ['html', 'markdown', 'whatsapp'] as const;

@Resolver()
export class ExportFormatResolver {
  @Query(() => [String], { description: 'Formats a survey can be exported in' })
  surveyExportFormats(): string[] {
    return [...EXPORT_FORMATS];
  }
}
