import type { EntityManager } from '../../lib/data/database.js';
import { AppError } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { Slice, Window } from '../../lib/data/pagination.js';
import type { ContactService } from './contact.service.js';
import { Note } from './note.entity.js';
import type { CreateNoteInput, UpdateNoteInput } from './note.input.js';

/** Notes belong to one live contact: under another contact, or once it is deleted, they are not found. */
export class NoteService {
  constructor(
    private readonly em: EntityManager,
    private readonly contacts: ContactService,
  ) {}

  /** Newest first. */
  async list(contactId: string, window: Window): Promise<Slice<Note>> {
    await this.contacts.get(contactId);
    const [items, total] = await this.em.findAndCount(
      Note,
      { contactId },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: window.limit, offset: window.offset },
    );
    return { items, total };
  }

  async get(contactId: string, noteId: string): Promise<Note> {
    await this.contacts.get(contactId);
    const note = isUuid(noteId) ? await this.em.findOne(Note, { id: noteId, contactId }) : null;
    if (!note) throw AppError.notFound('Note');
    return note;
  }

  async create(contactId: string, input: CreateNoteInput): Promise<Note> {
    await this.contacts.get(contactId);
    const note = new Note();
    note.contactId = contactId;
    note.body = requireBody(input.body);
    await this.em.persist(note).flush();
    return note;
  }

  async update(contactId: string, noteId: string, input: UpdateNoteInput): Promise<Note> {
    const note = await this.get(contactId, noteId);
    note.body = requireBody(input.body);
    await this.em.flush();
    return note;
  }

  /** Removes the note permanently and answers it as it was. */
  async delete(contactId: string, noteId: string): Promise<Note> {
    const note = await this.get(contactId, noteId);
    await this.em.remove(note).flush();
    return note;
  }
}

function requireBody(body: string): string {
  const trimmed = body.trim();
  if (!trimmed) throw AppError.badInput('body', 'must not be empty');
  return trimmed;
}
