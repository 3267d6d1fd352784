import { Field, ObjectType } from 'type-graphql';

export const EXPORT_FORMATS = ['html', 'markdown', 'whatsapp'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

@ObjectType({ description: 'A survey rendered as a document' })
export class SurveyExport {
  @Field(() => String, { description: 'The format rendered: html, markdown or whatsapp' }) format!: string;
  @Field(() => String, { description: 'Content-Type of the body, with its charset' }) contentType!: string;
  @Field(() => String, { description: 'A file name for saving the document' }) filename!: string;
  @Field(() => String, { description: 'The document itself' }) body!: string;
}
