import { Attachment } from './attachment.entity.js';
import { ContactImport, ImportUpload } from './contact-import.entity.js';
import { Contact } from './contact.entity.js';
import { Note } from './note.entity.js';
import { ContactStage, Pipeline, Stage, StageMove } from './pipeline.entity.js';

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
];
