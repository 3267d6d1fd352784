import { Attachment } from './attachments/attachment.entity.js';
import { ContactImport, ImportUpload } from './import/contact-import.entity.js';
import { Contact } from './contact/contact.entity.js';
import { ContactEvent } from './contact/contact-event.entity.js';
import { ContactMerge } from './merge/contact-merge.entity.js';
import { Note } from './notes/note.entity.js';
import { ContactStage, Pipeline, Stage, StageMove } from './pipelines/pipeline.entity.js';

/** Every MikroORM entity of the contacts schema. */
export const contactsEntities = [
  Contact,
  Note,
  Attachment,
  Pipeline,
  Stage,
  ContactStage,
  StageMove,
  ImportUpload,
  ContactImport,
  ContactEvent,
  ContactMerge,
];
