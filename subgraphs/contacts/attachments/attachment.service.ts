import { randomUUID } from 'node:crypto';
import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import { isUuid } from '#lib/ids.js';
import { byCreation, keysetWindow, pageOfQuery, type KeysetArgs } from '#lib/data/keyset.js';
import type { Connection, Slice, Window } from '#lib/data/pagination.js';
import { signPayload, verifyPayload, type Keys } from '#lib/secrets.js';
import type { ObjectStorage } from '#lib/storage/storage.js';
import {
  checkDeclaration,
  commitUpload,
  dropUploadBytes,
  stagingKeyOf,
  sweepReservations,
  type UploadPolicy,
} from '#lib/storage/uploads.js';
import { Attachment, AttachmentStatus, AttachmentUploadSlot } from './attachment.entity.js';
import type { ContactService } from '../contact/contact.service.js';

const NEWEST_FIRST = byCreation<Attachment>('a', 'desc');

const UPLOAD_WINDOW_MS = 15 * 60 * 1000;
const FILENAME_MAX = 255;

/** What an upload token carries, signed: the reserved attachment and the token's expiry (ms). */
interface UploadTokenClaims {
  a: string;
  e: number;
}

export interface AttachmentSettings {
  storage: ObjectStorage;
  maxBytes: number;
  /** Signs upload slots so that recordAttachment accepts only reservations this service handed out. */
  /** Signs with the first, verifies with any (ENCRYPTION_KEY's rotation). */
  signingKey: Keys;
}

/**
 * Attachments are written on the platform's upload protocol (`lib/storage/uploads.ts`), as bytes never travel
 * through GraphQL: a pending row is reserved for a live contact, the caller streams the bytes to its
 * staging key, and the commit checks them (within the limit, not empty, the type from the first bytes
 * when it is one that can be checked: any type is allowed) and moves them into place. A refused or
 * cancelled upload keeps nothing: no row, no bytes; one never recorded is swept once expired.
 */
export class AttachmentService {
  constructor(
    private readonly em: EntityManager,
    private readonly contacts: ContactService,
    private readonly settings: AttachmentSettings,
  ) {}

  private get policy(): UploadPolicy {
    return { maxBytes: this.settings.maxBytes, allowedTypes: null };
  }

  /** Committed attachments of a live contact, newest first, as a keyset connection. */
  async connection(contactId: string, args: KeysetArgs): Promise<Connection<Attachment>> {
    const window = keysetWindow(NEWEST_FIRST, args);
    await this.contacts.get(contactId);
    const where = { contactId, status: AttachmentStatus.committed };
    const query = this.em.createQueryBuilder(Attachment, 'a').where(where);
    return pageOfQuery(query, NEWEST_FIRST, window, () => this.em.count(Attachment, where));
  }

  /** The same attachments as a numbered page (the REST list). */
  async list(contactId: string, window: Window): Promise<Slice<Attachment>> {
    await this.contacts.get(contactId);
    const [items, total] = await this.em.findAndCount(
      Attachment,
      { contactId, status: AttachmentStatus.committed },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: window.limit, offset: window.offset },
    );
    return { items, total };
  }

  /** A committed attachment of a live contact, or null. */
  async find(id: string): Promise<Attachment | null> {
    if (!isUuid(id)) return null;
    const attachment = await this.em.findOne(Attachment, { id, status: AttachmentStatus.committed });
    if (!attachment || !(await this.contacts.find(attachment.contactId))) return null;
    return attachment;
  }

  async reserveUpload(
    contactId: string,
    filename: string,
    contentType: string | null | undefined,
  ): Promise<AttachmentUploadSlot> {
    await this.contacts.get(contactId);
    const attachment = new Attachment();
    attachment.contactId = contactId;
    attachment.filename = safeFilename(filename);
    attachment.contentType = checkDeclaration(this.policy, { contentType });
    attachment.storageKey = `contacts/${contactId}/attachments/${randomUUID()}`;
    attachment.uploadExpiresAt = new Date(Date.now() + UPLOAD_WINDOW_MS);
    await this.em.persist(attachment).flush();
    const claims: UploadTokenClaims = { a: attachment.id, e: attachment.uploadExpiresAt.getTime() };
    return {
      uploadToken: signPayload(this.settings.signingKey, claims),
      storageKey: stagingKeyOf(attachment.storageKey),
      maxBytes: this.settings.maxBytes,
      contentType: attachment.contentType,
      expiresAt: attachment.uploadExpiresAt,
    };
  }

  /**
   * Commits the stored bytes of a reservation; on any refusal the reservation ends, row and bytes.
   * `sent` restates what the caller sent (its contact, its file's name and SHA-256), checked against
   * the reservation and the bytes: a request's Idempotency-Key covers them, not the upload token.
   */
  async record(
    uploadToken: string,
    sent: { contactId?: string | null; sha256?: string | null; filename?: string | null } = {},
  ): Promise<Attachment> {
    const attachment = await this.reserved(uploadToken);
    if (!attachment) throw AppError.badInput('uploadToken', 'is not a valid, unexpired upload slot');
    try {
      if (sent.contactId && sent.contactId !== attachment.contactId)
        throw AppError.badInput('contactId', 'is not the contact the upload was reserved for');
      if (sent.filename && safeFilename(sent.filename) !== attachment.filename)
        throw AppError.badInput('filename', 'is not the name the upload was reserved with');
      await this.contacts.get(attachment.contactId);
      const { size } = await commitUpload(
        this.settings.storage,
        {
          key: attachment.storageKey,
          contentType: attachment.contentType,
          size: null,
          expiresAt: attachment.uploadExpiresAt,
        },
        this.policy,
        { sha256: sent.sha256 },
      );
      // Conditional on the state: of two commits, one records the attachment.
      const updated = await this.em.nativeUpdate(
        Attachment,
        { id: attachment.id, status: AttachmentStatus.pending },
        { status: AttachmentStatus.committed, size, uploadExpiresAt: null },
      );
      if (updated !== 1) throw new AppError(ErrorCode.CONFLICT, 'This upload has already been recorded');
      Object.assign(attachment, { status: AttachmentStatus.committed, size, uploadExpiresAt: null });
      return attachment;
    } catch (error) {
      if (!(error instanceof AppError && error.code === ErrorCode.CONFLICT)) await this.drop(attachment);
      throw error;
    }
  }

  /** Ends a reservation that will not be recorded (its upload failed): row and bytes. False when there was none. */
  async cancel(uploadToken: string): Promise<boolean> {
    const attachment = await this.reserved(uploadToken);
    if (!attachment) return false;
    await this.drop(attachment);
    return true;
  }

  /** Removes row and bytes; the row goes only when the bytes could be deleted. */
  async delete(id: string): Promise<Attachment> {
    const attachment = await this.find(id);
    if (!attachment) throw AppError.notFound('Attachment');
    await this.em.transactional(async (tx) => {
      await tx.nativeDelete(Attachment, { id: attachment.id });
      await this.settings.storage.delete(attachment.storageKey);
    });
    return attachment;
  }

  /** The pending reservation an upload token names, or null (forged, expired, recorded or gone). */
  private async reserved(uploadToken: string): Promise<Attachment | null> {
    const claims = verifyPayload<UploadTokenClaims>(this.settings.signingKey, uploadToken);
    if (!claims || typeof claims.a !== 'string' || !isUuid(claims.a) || claims.e < Date.now()) return null;
    return this.em.findOne(Attachment, { id: claims.a, status: AttachmentStatus.pending });
  }

  private async drop(attachment: Attachment): Promise<void> {
    await dropUploadBytes(this.settings.storage, [attachment.storageKey]);
    await this.em.nativeDelete(Attachment, { id: attachment.id, status: AttachmentStatus.pending });
  }
}

/** Deletes the attachment uploads reserved and never recorded, once their window closed: rows and staged bytes. */
export function sweepAttachmentUploads(em: EntityManager, storage: ObjectStorage, now = new Date()): Promise<number> {
  return sweepReservations(em, storage, Attachment, { status: AttachmentStatus.pending }, now);
}

/** The name as shown to people: no folders, no control characters, bounded length. */
function safeFilename(filename: string): string {
  const base = filename.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    .replace(/\p{Cc}/gu, '')
    .trim()
    .slice(0, FILENAME_MAX);
  if (!cleaned || cleaned === '.' || cleaned === '..') throw AppError.badInput('filename', 'must be a file name');
  return cleaned;
}
