import { isDeepStrictEqual } from 'node:util';
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import { isUuid } from '#lib/ids.js';
import { Contact } from '../contact/contact.entity.js';
import { ContactEventType } from '../contact/contact-event.entity.js';
import { recordContactEvent } from '../contact/contact-event.service.js';
import { contactQueries } from '../contact/contact.queries.js';
import { toContact } from '../duplicates/duplicate.service.js';
import { ContactMerge, type FieldChange, type MovedRows } from './contact-merge.entity.js';
import { MERGE_MAX, type ContactFieldSourcesInput, type MergeContactsInput } from './merge.input.js';
import { mergeQueries, uuidArray } from './merge.queries.js';

/** How long a merge can be undone. */
export const UNDO_WINDOW_DAYS = 30;

/** The survivor's fields a merge decides, in the order of MergeQueries.updateSurvivor. */
const FIELDS = ['firstName', 'lastName', 'email', 'phone', 'company'] as const;
type MergedField = (typeof FIELDS)[number];
type Values = Pick<Contact, MergedField | 'tags'>;

/** Thrown inside a dry run's transaction to roll it back with its answer. */
class DryRun extends Error {
  constructor(readonly contact: Contact) {
    super('dry run: rolled back');
  }
}

/**
 * Merges contacts into one that survives, in one transaction with one MERGED event, and undoes a
 * merge from what it recorded. Merged contacts are soft deleted with `mergedInto`, never rewritten:
 * undo only has to give them back, and whatever moved from them (notes, attachments, stage history).
 */
export class MergeService {
  constructor(private readonly em: EntityManager) {}

  /**
   * A dry run runs the very same transaction and rolls it back: its answer is what the merge would
   * do, to the last filled field, and nothing stays (no row, no event, no notification).
   */
  async merge(input: MergeContactsInput): Promise<{ contact: Contact; merge: ContactMerge | null }> {
    const mergeIds = checkMergeIds(input.survivorId, input.mergeIds);
    try {
      return await uniqueEmail(
        this.em.transactional(async (tx) => {
          const { survivor, merged } = await lockForMerge(tx, input.survivorId, mergeIds);
          const sources = checkSources(input.fieldSources, survivor, mergeIds);
          const values = mergedValues(survivor, merged, sources);
          const changes = changesOf(survivor, values);
          const sql = mergeQueries(tx);
          const now = new Date();
          // Retired first: the survivor may take an e-mail address that only a live contact may hold.
          await tx.execute(sql.retire, [survivor.id, now, now, uuidArray(mergeIds)]);
          await tx.execute(sql.updateSurvivor, [
            ...FIELDS.map((field) => values[field]),
            JSON.stringify(values.tags),
            now,
            survivor.id,
          ]);
          const moved: MovedRows = {
            notes: await moveRows(tx, 'note', survivor.id, mergeIds),
            attachments: await moveRows(tx, 'attachment', survivor.id, mergeIds),
            stageMoves: await moveRows(tx, 'stage_move', survivor.id, mergeIds),
            stage: await takeStage(tx, survivor.id, mergeIds),
          };
          const merge = Object.assign(new ContactMerge(), {
            survivorId: survivor.id,
            mergedIds: mergeIds,
            changes,
            moved,
          });
          merge.createdAt = now;
          tx.persist(merge);
          recordContactEvent(tx, survivor.id, ContactEventType.MERGED);
          await tx.flush();
          const contact = await readContact(tx, survivor.id);
          if (input.dryRun) throw new DryRun(contact);
          return { contact, merge };
        }),
      );
    } catch (error) {
      if (error instanceof DryRun) return { contact: error.contact, merge: null };
      throw error;
    }
  }

  /**
   * Gives back every merged contact as it was, with what moved from it and is still on the survivor,
   * and the survivor's values the merge gave it, except fields edited since (they keep the edit).
   */
  async undo(id: string): Promise<{ merge: ContactMerge; survivor: Contact; restored: Contact[] }> {
    if (!isUuid(id)) throw AppError.notFound('Merge');
    return uniqueEmail(
      this.em.transactional(async (tx) => {
        const merge = await tx.findOne(ContactMerge, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!merge) throw AppError.notFound('Merge');
        if (merge.undoneAt) throw new AppError(ErrorCode.CONFLICT, 'This merge was already undone');
        if (Date.now() - new Date(merge.createdAt).getTime() > UNDO_WINDOW_DAYS * 86_400_000) {
          throw new AppError(ErrorCode.CONFLICT, `A merge can be undone within ${UNDO_WINDOW_DAYS} days only`);
        }
        const locked = await tx.find(
          Contact,
          { id: { $in: [merge.survivorId, ...merge.mergedIds] } },
          { lockMode: LockMode.PESSIMISTIC_WRITE, orderBy: { id: 'asc' } },
        );
        const survivor = locked.find((contact) => contact.id === merge.survivorId);
        if (!survivor || survivor.deleted) {
          throw new AppError(ErrorCode.CONFLICT, 'The survivor was deleted or merged since: undo that first');
        }
        const sql = mergeQueries(tx);
        const now = new Date();
        // The survivor first: it may give back an e-mail address a restored contact holds again.
        const values: Values = { ...pick(survivor) };
        for (const [field, change] of Object.entries(merge.changes) as [MergedField | 'tags', FieldChange][]) {
          if (isDeepStrictEqual(values[field], change.after)) Object.assign(values, { [field]: change.before });
        }
        await tx.execute(sql.updateSurvivor, [
          ...FIELDS.map((field) => values[field]),
          JSON.stringify(values.tags),
          now,
          survivor.id,
        ]);
        const restored = await tx.execute<{ id: string }[]>(sql.restore, [
          now,
          uuidArray(merge.mergedIds),
          survivor.id,
        ]);
        for (const table of ['note', 'attachment', 'stage_move'] as const) {
          const rows = merge.moved[table === 'note' ? 'notes' : table === 'attachment' ? 'attachments' : 'stageMoves'];
          if (Object.keys(rows).length) await tx.execute(sql.moveBack(table), [JSON.stringify(rows), survivor.id]);
        }
        const stage = merge.moved.stage;
        if (stage) {
          await tx.execute(sql.dropStage, [survivor.id, stage.stageId, new Date(stage.movedAt)]);
          await tx.execute(sql.putStage, [stage.contactId, stage.pipelineId, stage.stageId, new Date(stage.movedAt)]);
        }
        merge.undoneAt = now;
        recordContactEvent(tx, survivor.id, ContactEventType.UPDATED);
        for (const { id: back } of restored) recordContactEvent(tx, back, ContactEventType.UPDATED);
        await tx.flush();
        return {
          merge,
          survivor: await readContact(tx, survivor.id),
          restored: await Promise.all(restored.map((row) => readContact(tx, row.id))),
        };
      }),
    );
  }

  /** The live contact each given contact is, or was merged into; absent when deleted otherwise. */
  async survivorsOf(ids: readonly string[]): Promise<Map<string, Contact>> {
    const valid = ids.filter(isUuid);
    if (!valid.length) return new Map();
    const rows = await this.em.execute<(Contact & { start: string })[]>(mergeQueries(this.em).survivors, [
      uuidArray(valid),
    ]);
    return new Map(rows.map(({ start, ...contact }) => [start, toContact(contact)]));
  }

  /** The ids merged into each contact, through merges of merges (a merge undone leaves none). */
  async mergedIdsOf(ids: readonly string[]): Promise<Map<string, string[]>> {
    const valid = ids.filter(isUuid);
    const found = new Map<string, string[]>();
    if (!valid.length) return found;
    const rows = await this.em.execute<{ root: string; id: string }[]>(mergeQueries(this.em).mergedInto, [
      uuidArray(valid),
    ]);
    for (const row of rows) found.set(row.root, [...(found.get(row.root) ?? []), row.id]);
    return found;
  }
}

/** Every refusal of `mergeIds` that needs no database: none, too many, twice, the survivor itself, not an id. */
function checkMergeIds(survivorId: string, mergeIds: readonly string[]): string[] {
  if (!mergeIds.length) throw AppError.badInput('mergeIds', 'must name at least one contact');
  if (mergeIds.length > MERGE_MAX) throw AppError.badInput('mergeIds', `must name at most ${MERGE_MAX} contacts`);
  if (new Set(mergeIds).size !== mergeIds.length) throw AppError.badInput('mergeIds', 'names a contact twice');
  if (mergeIds.includes(survivorId)) throw AppError.badInput('mergeIds', 'cannot hold the survivor itself');
  const malformed = mergeIds.find((id) => !isUuid(id));
  if (malformed !== undefined) throw AppError.badInput('mergeIds', `${String(malformed)} is no contact`);
  return [...mergeIds];
}

/** The survivor and the merged contacts, row-locked in id order (two merges over the same contacts take turns). */
async function lockForMerge(tx: EntityManager, survivorId: string, mergeIds: string[]) {
  if (!isUuid(survivorId)) throw AppError.notFound('Contact');
  const locked = await tx.find(
    Contact,
    { id: { $in: [survivorId, ...mergeIds] } },
    { lockMode: LockMode.PESSIMISTIC_WRITE, orderBy: { id: 'asc' } },
  );
  const byId = new Map(locked.map((contact) => [contact.id, contact]));
  const survivor = byId.get(survivorId);
  if (!survivor || survivor.deleted) throw AppError.notFound('Contact');
  const merged = mergeIds.map((id) => {
    const contact = byId.get(id);
    if (!contact) throw AppError.badInput('mergeIds', `${id} is no contact`);
    if (contact.mergedInto) throw AppError.badInput('mergeIds', `${id} is already merged into another contact`);
    if (contact.deleted) throw AppError.badInput('mergeIds', `${id} is deleted`);
    return contact;
  });
  return { survivor, merged };
}

/** Each field source named must be the survivor or one of the merged contacts. */
function checkSources(
  sources: ContactFieldSourcesInput | null | undefined,
  survivor: Contact,
  mergeIds: string[],
): Partial<Record<MergedField, string>> {
  const checked: Partial<Record<MergedField, string>> = {};
  for (const field of FIELDS) {
    const source = sources?.[field];
    if (source === undefined || source === null) continue;
    if (source !== survivor.id && !mergeIds.includes(source)) {
      throw AppError.badInput(`fieldSources.${field}`, 'must be the survivor or one of mergeIds');
    }
    checked[field] = source;
  }
  return checked;
}

/** The survivor's values, those taken from a named source, empty ones filled in mergeIds order; tags joined. */
function mergedValues(survivor: Contact, merged: Contact[], sources: Partial<Record<MergedField, string>>): Values {
  const values = pick(survivor);
  const byId = new Map([survivor, ...merged].map((contact) => [contact.id, contact]));
  for (const field of FIELDS) {
    const source = sources[field];
    if (source) values[field] = byId.get(source)![field];
    else if (!values[field]) values[field] = merged.find((contact) => contact[field])?.[field] ?? values[field];
  }
  values.tags = [...new Set([...survivor.tags, ...merged.flatMap((contact) => contact.tags)])];
  return values;
}

function pick(contact: Contact): Values {
  return {
    firstName: contact.firstName,
    lastName: contact.lastName,
    email: contact.email,
    phone: contact.phone,
    company: contact.company,
    tags: [...contact.tags],
  };
}

/** What the merge changes on the survivor, field by field, for undo to compare with later. */
function changesOf(survivor: Contact, values: Values): Record<string, FieldChange> {
  const before = pick(survivor);
  const changes: Record<string, FieldChange> = {};
  for (const field of [...FIELDS, 'tags'] as const) {
    if (!isDeepStrictEqual(before[field], values[field]))
      changes[field] = { before: before[field], after: values[field] };
  }
  return changes;
}

async function moveRows(
  tx: EntityManager,
  table: 'note' | 'attachment' | 'stage_move',
  survivorId: string,
  mergeIds: string[],
): Promise<Record<string, string>> {
  const rows = await tx.execute<{ id: string; from: string }[]>(mergeQueries(tx).move(table), [
    uuidArray(mergeIds),
    survivorId,
  ]);
  return Object.fromEntries(rows.map((row) => [row.id, row.from]));
}

/** The survivor keeps its stage; one without takes the first merged contact's (in mergeIds order) that has one. */
async function takeStage(tx: EntityManager, survivorId: string, mergeIds: string[]): Promise<MovedRows['stage']> {
  const sql = mergeQueries(tx);
  const rows = await tx.execute<NonNullable<MovedRows['stage']>[]>(sql.stages, [uuidArray([survivorId, ...mergeIds])]);
  if (rows.some((row) => row.contactId === survivorId)) return null;
  const taken = mergeIds.map((id) => rows.find((row) => row.contactId === id)).find(Boolean);
  if (!taken) return null;
  await tx.execute(sql.takeStage, [survivorId, taken.contactId]);
  return { ...taken, movedAt: new Date(taken.movedAt).toISOString() };
}

async function readContact(tx: EntityManager, id: string): Promise<Contact> {
  return toContact(await tx.execute<Contact>(contactQueries(tx).byId, [id], 'get'));
}

/** A merge or undo that would leave two live contacts with one e-mail address: the caller's to resolve. */
async function uniqueEmail<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) {
      throw new AppError(ErrorCode.CONFLICT, 'Another live contact already has this e-mail address', {
        fields: [{ field: 'email', message: 'is already used by another contact' }],
      });
    }
    throw error;
  }
}
