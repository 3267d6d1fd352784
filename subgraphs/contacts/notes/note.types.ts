import { ConnectionType, PageType } from '#lib/data/pagination.js';
import { DeletePayloadType } from '#lib/subgraph/delete-payload.js';
import { Note } from './note.entity.js';

export const NoteConnection = ConnectionType(Note, 'Note');
export const NotePage = PageType(Note, 'Note');

export const DeleteNotePayload = DeletePayloadType(Note, 'Note');
