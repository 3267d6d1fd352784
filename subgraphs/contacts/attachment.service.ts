import { randomUUID } from 'node:crypto';
import type { EntityManager } from '../../lib/database.js';
import { AppError, ErrorCode } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { Slice, Window } from '../../lib/pagination.js';
import { signPayload, verifyPayload } from '../../lib/secrets.js';
import type { ObjectStorage } from '../../lib/storage.js';
import { Attachment, AttachmentUploadSlot } from './attachment.entity.js';
import type { ContactService } from './contact.service.js';

const UPLOAD_WINDOW_MS = 15 * 60 * 1000;
const FILENAME_MAX = 255;
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** What an upload token carries, signed: contact, storage key, filename, type, expiry (ms). */
interface UploadTokenClaims {
  c: string;
  k: string;
  f: string;
  t: string;
  e: number;
}

export interface AttachmentSettings {
  storage: ObjectStorage;
  maxBytes: number;
  /** Signs upload slots so that recordAttachment accepts only keys this service handed out. */
  signingKey: Buffer;
}

/**
 * Attachments are written in two steps because bytes never travel through GraphQL: a slot is
 * reserved for a live contact, the caller streams the bytes to storage, and the metadata is
 * recorded only once the stored object is complete and within the limit. A failed step keeps
 * nothing: no row, no bytes.
 */
export class AttachmentService {
  constructor(
    private readonly em: EntityManager,
    private readonly contacts: ContactService,
    private readonly settings: AttachmentSettings,
  ) {}

  async list(contactId: string, window: Window): Promise<Slice<Attachment>> {
    await this.contacts.get(contactId);
    const [items, total] = await this.em.findAndCount(
      Attachment,
      { contactId },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: window.limit, offset: window.offset },
    );
    return { items, total };
  }

  /** An attachment of a live contact, or null. */
  async find(id: string): Promise<Attachment | null> {
    if (!isUuid(id)) return null;
    const attachment = await this.em.findOne(Attachment, { id });
    if (!attachment || !(await this.contacts.find(attachment.contactId))) return null;
    return attachment;
  }

  async reserveUpload(contactId: string, filename: string, contentType: string | null | undefined): Promise<AttachmentUploadSlot> {
    await this.contacts.get(contactId);
    const name = safeFilename(filename);
    const type = (contentType ?? '').split(';')[0].trim().toLowerCase() || 'application/octet-stream';
    if (!MEDIA_TYPE.test(type)) throw AppError.badInput('contentType', 'must be a media type such as text/plain');
    const storageKey = `contacts/${contactId}/attachments/${randomUUID()}`;
    const expiresAt = new Date(Date.now() + UPLOAD_WINDOW_MS);
    const claims: UploadTokenClaims = { c: contactId, k: storageKey, f: name, t: type, e: expiresAt.getTime() };
    return {
      uploadToken: signPayload(this.settings.signingKey, claims),
      storageKey,
      maxBytes: this.settings.maxBytes,
      contentType: type,
      expiresAt,
    };
  }

  /** Records the stored bytes of a slot; on any refusal the bytes are deleted. */
  async record(uploadToken: string): Promise<Attachment> {
    const claims = verifyPayload<UploadTokenClaims>(this.settings.signingKey, uploadToken);
    if (!claims || typeof claims.k !== 'string' || claims.e < Date.now()) {
      throw AppError.badInput('uploadToken', 'is not a valid, unexpired upload slot');
    }
    const { storage } = this.settings;
    const size = await storage.size(claims.k);
    if (size === null) throw AppError.badInput('file', 'no bytes were stored for this upload');
    try {
      if (size > this.settings.maxBytes) {
        throw new AppError(ErrorCode.PAYLOAD_TOO_LARGE, `The file is larger than ${this.settings.maxBytes} bytes`);
      }
      if (size === 0) throw AppError.badInput('file', 'must not be empty');
      await this.contacts.get(claims.c);
      if (await this.em.count(Attachment, { storageKey: claims.k })) {
        throw new AppError(ErrorCode.CONFLICT, 'This upload has already been recorded');
      }
      const attachment = new Attachment();
      attachment.contactId = claims.c;
      attachment.filename = claims.f;
      attachment.contentType = claims.t;
      attachment.size = size;
      attachment.storageKey = claims.k;
      await this.em.persist(attachment).flush();
      return attachment;
    } catch (error) {
      if (!(error instanceof AppError && error.code === ErrorCode.CONFLICT)) await storage.delete(claims.k);
      throw error;
    }
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
}

/** The name as shown to people: no folders, no control characters, bounded length. */
function safeFilename(filename: string): string {
  const base = filename.split(/[\\/]/).pop() ?? '';
  const cleaned = base.replace(/\p{Cc}/gu, '').trim().slice(0, FILENAME_MAX);
  if (!cleaned || cleaned === '.' || cleaned === '..') throw AppError.badInput('filename', 'must be a file name');
  return cleaned;
}
