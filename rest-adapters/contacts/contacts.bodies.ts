import { z } from 'zod';
import { idSchema, instantSchema, pageOf } from '#lib/rest/rest-schemas.js';
import { inputOf } from '#lib/rest/rest-bodies.js';

/**
 * The bodies of the contact management REST contract (the field names legacy clients rely on), once: the routes'
 * OpenAPI documentation, and the shape the adapter checks a JSON body against. What a value may
 * be (an e-mail address, a stage of the pipeline) is the contacts subgraph's rule.
 */

const text = (description: string) => z.string().nullable().meta({ description });

export const contactSchema = z
  .object({
    id: idSchema,
    firstName: text('Given name'),
    lastName: text('Family name'),
    email: text('E-mail address, unique among live contacts'),
    phone: text('Phone number'),
    company: text('Company the contact works for'),
    tags: z.array(z.string()).meta({ description: 'Free labels' }),
    deleted: z.boolean().meta({ description: 'True once soft deleted: the record remains' }),
    mergedInto: idSchema.nullable().meta({ description: 'The contact this one was merged into; null unless merged' }),
    createdAt: instantSchema,
    updatedAt: instantSchema,
  })
  .meta({ id: 'Contact', description: 'A contact of the shared address book' });

const optionalText = (description: string) => z.string().nullish().meta({ description });

export const contactInputSchema = inputOf(contactSchema, {
  firstName: optionalText('Given name; a new contact needs a first name or an e-mail address'),
  lastName: optionalText('Family name'),
  email: optionalText('E-mail address, unique among live contacts'),
  phone: optionalText('Phone number'),
  company: optionalText('Company the contact works for'),
  tags: z.array(z.string()).nullish().meta({ description: 'Free labels; the list replaces the previous one' }),
}).meta({
  id: 'ContactInput',
  description: 'A contact to create (firstName or email required), or the fields to change',
});

export const noteSchema = z
  .object({
    id: idSchema,
    contactId: idSchema,
    body: z.string().meta({ description: 'Text of the note' }),
    createdAt: instantSchema,
    updatedAt: instantSchema,
  })
  .meta({ id: 'Note', description: 'A note on a contact' });

export const noteInputSchema = inputOf(noteSchema, { body: z.string().meta({ description: 'Text of the note' }) }).meta(
  { id: 'NoteInput' },
);

export const attachmentSchema = z
  .object({
    id: idSchema,
    contactId: idSchema,
    filename: z.string(),
    contentType: z.string().meta({ description: 'Media type, checked from the first bytes of the file' }),
    size: z.int().min(0).meta({ description: 'Bytes' }),
    createdAt: instantSchema,
  })
  .meta({ id: 'Attachment', description: 'A file attached to a contact' });

export const deletedSchema = <T extends z.ZodObject>(item: T) =>
  item.extend({ deleted: z.literal(true).meta({ description: 'The item is gone for good' }) });

export const uploadSchema = (description: string) =>
  z.object({ file: z.string().meta({ format: 'binary', description }) });

export const importFormSchema = z.object({
  file: z.string().meta({ format: 'binary', description: 'The CSV file (a header row, then one contact per row)' }),
  mapping: z.string().optional().meta({
    description: 'JSON object: CSV column -> contact field (firstName, lastName, email, phone, company, tags)',
    example: '{"Vorname": "firstName", "Mail": "email"}',
  }),
});

export const importResultSchema = z
  .object({
    rows: z.int().meta({ description: 'Data rows read' }),
    created: z.int(),
    updated: z.int().meta({ description: 'Rows that matched a contact by e-mail address and updated it' }),
    skipped: z.int(),
    errors: z
      .array(z.object({ row: z.int(), column: z.string().nullable(), message: z.string() }))
      .meta({ description: 'Why each skipped row was skipped' }),
    errorsTruncated: z.boolean().meta({ description: 'True when more rows failed than `errors` lists' }),
    batches: z.array(
      z.object({ firstRow: z.int(), lastRow: z.int(), created: z.int(), updated: z.int(), written: z.boolean() }),
    ),
  })
  .meta({ id: 'ImportResult', description: 'What an import did' });

export const importJobSchema = z
  .object({
    id: idSchema,
    status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
    dryRun: z.boolean().meta({ description: 'True when the import only checks the rows and writes nothing' }),
    rows: z.int().nullable().meta({ description: 'Data rows in the file; null until the file has been read once' }),
    processed: z.int().meta({ description: 'Data rows done so far (written, or skipped and reported)' }),
    created: z.int().meta({ description: 'Contacts created (on a dry run: that would be created)' }),
    updated: z.int().meta({ description: 'Contacts matched by e-mail address and updated' }),
    skipped: z.int().meta({ description: 'Rows left out: invalid, or in a batch that could not be written' }),
    errors: z.int().meta({ description: 'Row errors reported; errors.csv lists them' }),
    failure: z.string().nullable().meta({ description: 'Why the import failed; null unless it did' }),
    createdAt: instantSchema,
    startedAt: instantSchema.nullable(),
    finishedAt: instantSchema.nullable(),
  })
  .meta({ id: 'ContactImport', description: 'A CSV import running in the background' });

const stageSchema = z
  .object({ id: idSchema, name: z.string(), position: z.int().meta({ description: 'Order in the pipeline, from 0' }) })
  .meta({ id: 'Stage' });

export const pipelineSchema = z
  .object({
    id: idSchema,
    name: z.string(),
    isDefault: z.boolean().meta({ description: 'The pipeline a contact is placed in when a move names no pipeline' }),
    createdAt: instantSchema,
    stages: z.array(stageSchema).meta({ description: 'Stages in order' }),
  })
  .meta({ id: 'Pipeline', description: 'A sales pipeline and its ordered stages' });

export const boardSchema = z
  .object({
    pipeline: pipelineSchema,
    stages: z.array(
      stageSchema.extend({
        count: z.int().meta({ description: 'Contacts in this stage (all of them, not only those listed)' }),
        contacts: z.array(contactSchema).meta({ description: 'The first contacts of the stage (limit)' }),
      }),
    ),
  })
  .meta({ id: 'Board', description: 'Contacts grouped by stage' });

export const stageMoveSchema = z
  .object({
    id: idSchema,
    contactId: idSchema,
    pipelineId: idSchema,
    fromStageId: idSchema.nullable().meta({ description: 'Null for the first placement' }),
    toStageId: idSchema,
    movedAt: instantSchema,
  })
  .meta({ id: 'StageMove', description: 'One move of a contact between stages' });

export const moveInputSchema = z
  .strictObject({
    stageId: idSchema.meta({ description: 'The stage to move the contact to' }),
    pipelineId: idSchema.nullish().meta({ description: 'The pipeline of that stage, to switch pipelines' }),
  })
  .meta({ id: 'MoveInput' });

export const placementSchema = z
  .object({
    contactId: idSchema,
    pipelineId: idSchema,
    stageId: idSchema,
    toStageId: idSchema,
    fromStageId: idSchema.nullable(),
    movedAt: instantSchema,
    moved: z.boolean().meta({ description: 'False when the contact already was in that stage (nothing recorded)' }),
    move: stageMoveSchema.nullable(),
  })
  .meta({ id: 'Placement', description: 'Where the contact is now' });

export const contactPage = pageOf(contactSchema, 'Contact');
export const notePage = pageOf(noteSchema, 'Note');
export const attachmentPage = pageOf(attachmentSchema, 'Attachment');
export const pipelinePage = pageOf(pipelineSchema, 'Pipeline');
export const stageMovePage = pageOf(stageMoveSchema, 'StageMove');
