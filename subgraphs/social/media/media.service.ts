import { Readable } from 'node:stream';
import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import { isUuid } from '#lib/ids.js';
import { byCreation, keysetWindow, pageOfQuery, type KeysetArgs } from '#lib/data/keyset.js';
import type { Connection, Slice, Window } from '#lib/data/pagination.js';
import type { ObjectStorage } from '#lib/storage/storage.js';
import {
  checkDeclaration,
  commitUpload,
  dropUploadBytes,
  presignUpload,
  SWEEP_BATCH,
  sweepBefore,
  type UploadPolicy,
} from '#lib/storage/uploads.js';
import { Brand } from '../access/brand.entity.js';
import type { Reach } from '../access/reach.js';
import { MediaFile, MediaSource, MediaStatus } from './media.entity.js';
import type { MediaUploadGrant } from './media.types.js';

const NEWEST_FIRST = byCreation<MediaFile>('m', 'desc');

/** What a media file may be: the images and videos the supported platforms accept. */
export const MEDIA_CONTENT_TYPES = [
  'image/jpeg',
  'image/png',
  'image/gif',
  'image/webp',
  'video/mp4',
  'video/quicktime',
  'video/webm',
] as const;
export const UPLOAD_URL_TTL_SECONDS = 900;
const DOWNLOAD_URL_TTL_SECONDS = 3600;
const FILENAME_MAX = 255;

export interface MediaSettings {
  storage: ObjectStorage;
  maxBytes: number;
  /** Base of the social REST service, which serves the local store's signed URLs. */
  publicUrl: string;
}

export interface UploadRequest {
  filename: string;
  contentType: string;
  size: number;
  brandId?: string | null;
}

function policyOf(settings: MediaSettings): UploadPolicy {
  return { maxBytes: settings.maxBytes, allowedTypes: MEDIA_CONTENT_TYPES };
}

/**
 * The rules of media files: declared uploads through signed URLs (the platform's upload protocol,
 * `lib/storage/uploads.ts`), and generated images, all inside the caller's reach. A file may belong to one
 * brand or to the owner as a whole; an API key limited to some brands sees and makes only files of
 * those brands.
 *
 * The REST contract has no commit step (`POST /api/media/upload` answers a URL, `GET /api/media`
 * lists), so the commit runs without the client asking: reading media (list, one file) first commits
 * the pending uploads in reach whose bytes arrived, with the same check and move as every other
 * upload, and the sweep does the same for those nobody read before their URL expired. One path for
 * both stores: the file store's upload route cannot commit on arrival, as it has no database, and an
 * S3 upload tells no one. A file is listed only once committed: checked for size and type (its first
 * bytes) and moved out of its upload URL's reach.
 */
export class MediaService {
  constructor(
    private readonly em: EntityManager,
    private readonly reach: Reach,
    private readonly settings: MediaSettings,
  ) {}

  /**
   * Registers a file the client will upload itself and hands out where to send it. Type and size
   * are declared here and enforced by the upload URL; the file is listed once its bytes arrive.
   */
  async requestUpload(request: UploadRequest): Promise<MediaUploadGrant> {
    const filename = cleanFilename(request.filename);
    // `size` is required here (an upload URL is for an exact number of bytes), unlike a multipart part's.
    if (typeof request.size !== 'number')
      throw AppError.badInput('size', 'must be a whole number of bytes, at least 1');
    const contentType = checkDeclaration(policyOf(this.settings), request);
    const brandId = await this.brandFor(request.brandId);

    const file = new MediaFile();
    file.ownerId = this.reach.ownerId;
    file.brandId = brandId;
    file.filename = filename;
    file.contentType = contentType;
    file.size = request.size;
    file.storageKey = `media/${file.id}`;
    file.source = MediaSource.UPLOAD;
    const upload = await presignUpload(
      this.settings.storage,
      { key: file.storageKey, contentType, size: request.size },
      { expiresInSeconds: UPLOAD_URL_TTL_SECONDS, baseUrl: this.settings.publicUrl },
    );
    file.uploadExpiresAt = upload.expiresAt;
    await this.em.persist(file).flush();
    return {
      id: file.id,
      uploadUrl: upload.url,
      method: upload.method,
      headers: upload.headers,
      expiresAt: upload.expiresAt,
    };
  }

  /** Files in reach whose bytes have arrived and were committed, newest first, as a keyset connection. */
  async connection(args: KeysetArgs): Promise<Connection<MediaFile>> {
    const window = keysetWindow(NEWEST_FIRST, args);
    await this.settleUploads();
    const where = { ...this.reach.filter(), status: MediaStatus.READY };
    const query = this.em.createQueryBuilder(MediaFile, 'm').where(where);
    return pageOfQuery(query, NEWEST_FIRST, window, () => this.em.count(MediaFile, where));
  }

  /** The same files as a numbered page (the REST list). */
  async list(window: Window): Promise<Slice<MediaFile>> {
    await this.settleUploads();
    const [items, total] = await this.em.findAndCount(
      MediaFile,
      { ...this.reach.filter(), status: MediaStatus.READY },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: window.limit, offset: window.offset },
    );
    return { items, total };
  }

  /**
   * Commits the pending uploads in reach whose bytes arrived (see the class comment). Only uploads
   * whose URL is in use or has just expired are looked at; older ones belong to the sweep. Storage
   * is asked, never the client.
   */
  private async settleUploads(): Promise<void> {
    const pending = await this.em.find(
      MediaFile,
      { ...this.reach.filter(), status: MediaStatus.PENDING, uploadExpiresAt: { $gte: sweepBefore(new Date()) } },
      { orderBy: { createdAt: 'desc' }, limit: 100 },
    );
    if (!pending.length) return;
    const { ready } = await commitMediaUploads(this.em, this.settings, pending, { sweeping: false });
    for (const file of pending) if (ready.includes(file.id)) this.em.getUnitOfWork().unsetIdentity(file);
  }

  /** A file in reach that is ready, or null. */
  async find(id: string): Promise<MediaFile | null> {
    if (!isUuid(id)) return null;
    await this.settleUploads();
    return this.em.findOne(MediaFile, { id, ...this.reach.filter(), status: MediaStatus.READY });
  }

  /** Stores bytes made by the platform itself (a generated image) as a ready media file. */
  async storeGenerated(image: {
    bytes: Buffer;
    contentType: string;
    prompt: string;
    brandId: string | null;
    filename: string;
  }): Promise<MediaFile> {
    const file = new MediaFile();
    file.ownerId = this.reach.ownerId;
    file.brandId = image.brandId;
    file.filename = image.filename;
    file.contentType = image.contentType;
    file.size = image.bytes.length;
    file.storageKey = `media/${file.id}`;
    file.source = MediaSource.AI;
    file.prompt = image.prompt;
    file.status = MediaStatus.READY;
    file.readyAt = new Date();
    await this.settings.storage.put(file.storageKey, Readable.from([image.bytes]), {
      contentType: image.contentType,
      maxBytes: this.settings.maxBytes,
    });
    try {
      await this.em.persist(file).flush();
    } catch (error) {
      // Bytes without a record would be unreachable; keep neither.
      await this.settings.storage.delete(file.storageKey).catch(() => undefined);
      throw error;
    }
    return file;
  }

  /**
   * The brand a new file goes to: the one named, which must be in reach; none (the owner's file)
   * when none is named, which only a caller reaching every brand may make.
   */
  async brandFor(brandId: string | null | undefined): Promise<string | null> {
    if (brandId === undefined || brandId === null || brandId === '') {
      if (!this.reach.everyBrand)
        throw AppError.badInput('brandId', 'is required: this API key reaches only some brands');
      return null;
    }
    const brand =
      isUuid(brandId) && this.reach.covers(brandId)
        ? await this.em.findOne(Brand, { id: brandId, ownerId: this.reach.ownerId }, { fields: ['id'] })
        : null;
    if (!brand) throw AppError.notFound('Brand');
    return brand.id;
  }

  /** A URL to fetch the file's bytes: presigned on S3, signed and served by the social REST service otherwise. */
  urlOf(file: MediaFile): Promise<string> {
    return this.settings.storage.presignGet(file.storageKey, {
      expiresInSeconds: DOWNLOAD_URL_TTL_SECONDS,
      baseUrl: this.settings.publicUrl,
      contentType: file.contentType,
      filename: file.filename,
    });
  }
}

/**
 * Commits each of `files` whose bytes arrived (size and type checked, moved into place) and marks it
 * ready; bytes that fail the check are deleted (the file stays pending: its URL may be used again).
 * While sweeping (URLs long expired), a file whose commit had moved its bytes but not changed its row
 * is made ready too, and the others are answered as `dropped`.
 */
async function commitMediaUploads(
  em: EntityManager,
  settings: MediaSettings,
  files: readonly MediaFile[],
  options: { sweeping: boolean },
): Promise<{ ready: string[]; dropped: MediaFile[] }> {
  const ready: string[] = [];
  const dropped: MediaFile[] = [];
  for (const file of files) {
    try {
      await commitUpload(
        settings.storage,
        {
          key: file.storageKey,
          contentType: file.contentType,
          size: file.size,
          expiresAt: options.sweeping ? null : file.uploadExpiresAt,
        },
        policyOf(settings),
      );
      ready.push(file.id);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // Only a commit puts bytes in the final key: those are checked.
      if (options.sweeping && error.code === ErrorCode.CONFLICT && error.extensions.state === 'committed')
        ready.push(file.id);
      else if (options.sweeping) dropped.push(file);
    }
  }
  if (ready.length)
    await em.nativeUpdate(
      MediaFile,
      { id: { $in: ready }, status: MediaStatus.PENDING },
      { status: MediaStatus.READY, readyAt: new Date() },
    );
  return { ready, dropped };
}

/**
 * The sweep of media uploads whose URL expired before `sweepBefore(now)` and were never committed:
 * bytes that arrived are committed as a read would have, the rest go, rows and bytes. Answers how
 * many went.
 */
export async function sweepMediaUploads(em: EntityManager, settings: MediaSettings, now = new Date()): Promise<number> {
  const expired = await em.find(
    MediaFile,
    { status: MediaStatus.PENDING, uploadExpiresAt: { $lt: sweepBefore(now) } },
    { orderBy: { uploadExpiresAt: 'asc' }, limit: SWEEP_BATCH },
  );
  if (!expired.length) return 0;
  // Claimed one by one (the expiry moves to the epoch, still due): of sweeps running at once, one
  // commits or drops each upload, and none drops what another has just committed.
  const claimed: MediaFile[] = [];
  for (const file of expired) {
    if (
      await em.nativeUpdate(
        MediaFile,
        { id: file.id, status: MediaStatus.PENDING, uploadExpiresAt: file.uploadExpiresAt },
        { uploadExpiresAt: new Date(0) },
      )
    )
      claimed.push(file);
  }
  const { dropped } = await commitMediaUploads(em, settings, claimed, { sweeping: true });
  if (!dropped.length) return 0;
  await dropUploadBytes(
    settings.storage,
    dropped.map((file) => file.storageKey),
  );
  return em.nativeDelete(MediaFile, { id: { $in: dropped.map((file) => file.id) }, status: MediaStatus.PENDING });
}

/** Which of `ids` are media files inside `reach`, read in `em` (the caller's transaction): what a post may carry. */
export async function mediaInReach(
  em: EntityManager,
  reach: Reach,
  ids: readonly string[],
): Promise<ReadonlySet<string>> {
  const valid = ids.filter(isUuid);
  if (!valid.length) return new Set();
  const found = await em.find(MediaFile, { id: { $in: valid }, ...reach.filter() }, { fields: ['id'] });
  return new Set(found.map((file) => file.id));
}

function cleanFilename(value: unknown): string {
  const text = typeof value === 'string' ? value : '';
  // Only the last path segment is a name; control characters have no place in one.
  const name = text
    .split(/[\\/]/)
    .pop()!
    .replace(/\p{Cc}/gu, '')
    .trim();
  if (!name) throw AppError.badInput('filename', 'is required');
  if (name.length > FILENAME_MAX) throw AppError.badInput('filename', `must be at most ${FILENAME_MAX} characters`);
  return name;
}
