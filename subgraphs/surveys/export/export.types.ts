import { Field, ObjectType, registerEnumType } from 'type-graphql';

export const EXPORT_FORMATS = ['html', 'markdown', 'whatsapp'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The formats as the graph names them; each value is the format's own word (EXPORT_FORMATS). */
export enum SurveyExportFormat {
  HTML = 'html',
  MARKDOWN = 'markdown',
  WHATSAPP = 'whatsapp',
}

registerEnumType(SurveyExportFormat, {
  name: 'SurveyExportFormat',
  description: 'What a survey can be exported as',
  valuesConfig: {
    HTML: { description: 'A printable page' },
    MARKDOWN: { description: 'A Markdown document' },
    WHATSAPP: { description: 'A chat message' },
  },
});

@ObjectType({ description: 'A survey rendered as a document' })
export class SurveyExport {
  @Field(() => SurveyExportFormat, { description: 'The format rendered' }) format!: ExportFormat;
  @Field(() => String, { description: 'Content-Type of the body, with its charset' }) contentType!: string;
  @Field(() => String, { description: 'A file name for saving the document' }) filename!: string;
  @Field(() => String, { description: 'The document itself' }) body!: string;
}
