import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '#lib/data/database.js';
import { checkVersion } from '#lib/data/versions.js';
import { AppError } from '#lib/errors.js';
import { isUuid } from '#lib/ids.js';
import { byCreation, keysetWindow, pageOfQuery, type KeysetArgs } from '#lib/data/keyset.js';
import type { Connection, Slice, Window } from '#lib/data/pagination.js';
import type { ContactService } from '../contact/contact.service.js';
import { Note } from './note.entity.js';
import type { CreateNoteInput, UpdateNoteInput } from './note.input.js';

const NEWEST_FIRST = byCreation<Note>('n', 'desc');

/** Notes belong to one live contact: under another contact, or once it is deleted, they are not found. */
export class NoteService {
  constructor(
    private readonly em: EntityManager,
    private readonly contacts: ContactService,
  ) {}

  /** Newest first, as a keyset connection. */
  async connection(contactId: string, args: KeysetArgs): Promise<Connection<Note>> {
    const window = keysetWindow(NEWEST_FIRST, args);
    await this.contacts.get(contactId);
    const where = { contactId };
    const query = this.em.createQueryBuilder(Note, 'n').where(where);
    return pageOfQuery(query, NEWEST_FIRST, window, () => this.em.count(Note, where));
  }

  /** Newest first, a numbered page (the REST list). */
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

  /** Changes the text; with `ifVersion`, only while the note is still at that version (lib/data/versions.ts). */
  async update(contactId: string, noteId: string, input: UpdateNoteInput, ifVersion?: number | null): Promise<Note> {
    await this.contacts.get(contactId);
    return this.em.transactional(async (tx) => {
      const note = await this.locked(tx, contactId, noteId, ifVersion);
      note.body = requireBody(input.body);
      return note;
    });
  }

  /** Removes the note permanently and answers it as it was. */
  async delete(contactId: string, noteId: string, ifVersion?: number | null): Promise<Note> {
    await this.contacts.get(contactId);
    return this.em.transactional(async (tx) => {
      const note = await this.locked(tx, contactId, noteId, ifVersion);
      tx.remove(note);
      return note;
    });
  }

  /**
   * The note of a contact already found live, row-locked for the rest of the transaction so that its
   * version check and the write are one step (the contact is looked up before: PGlite's one
   * connection is the transaction's until it ends).
   */
  private async locked(
    tx: EntityManager,
    contactId: string,
    noteId: string,
    ifVersion: number | null | undefined,
  ): Promise<Note> {
    const note = isUuid(noteId)
      ? await tx.findOne(Note, { id: noteId, contactId }, { lockMode: LockMode.PESSIMISTIC_WRITE })
      : null;
    if (!note) throw AppError.notFound('Note');
    checkVersion(note.version, ifVersion);
    return note;
  }
}

function requireBody(body: string): string {
  const trimmed = body.trim();
  if (!trimmed) throw AppError.badInput('body', 'must not be empty');
  return trimmed;
}
