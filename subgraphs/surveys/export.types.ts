import { Field, ObjectType } from 'type-graphql';

export const EXPORT_FORMATS = ['html', 'markdown', 'whatsapp'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

@ObjectType({ description: 'A survey rendered as a document' })
export class SurveyExport {
  @Field(() => String) format!: string;
  @Field(() => String, { description: 'Content-Type of the body, with its charset' }) contentType!: string;
  @Field(() => String, { description: 'A file name for saving the document' }) filename!: string;
  @Field(() => String) body!: string;
}
