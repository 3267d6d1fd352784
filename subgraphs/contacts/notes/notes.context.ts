import type { NoteService } from './note.service.js';

/** What the note resolvers use of a request's context (contacts.context.ts makes it). */
export interface NotesContext {
  notes: NoteService;
}
