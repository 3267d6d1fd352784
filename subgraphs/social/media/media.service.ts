import { Readable } from 'node:stream';
import type { EntityManager } from '../../../lib/database.js';
import { AppError, ErrorCode } from '../../../lib/errors.js';
import { isUuid } from '../../../lib/ids.js';
import type { Slice, Window } from '../../../lib/pagination.js';
import type { ObjectStorage } from '../../../lib/storage.js';
import { Brand } from '../access/brand.entity.js';
import type { Reach } from '../access/reach.js';
import { MediaFile, MediaSource, MediaStatus } from './media.entity.js';
import type { MediaUploadGrant } from './media.types.js';

/** What a media file may be: the images and videos the supported platforms accept. */
export const MEDIA_CONTENT_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'video/mp4', 'video/quicktime', 'video/webm'] as const;
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

/**
 * The rules of media files: declared uploads through signed URLs, and generated images, all
 * inside the caller's reach. A file may belong to one brand or to the owner as a whole; an API
 * key limited to some brands sees and makes only files of those brands.
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
    const contentType = String(request.contentType ?? '').trim().toLowerCase();
    if (!(MEDIA_CONTENT_TYPES as readonly string[]).includes(contentType)) {
      throw AppError.badInput('contentType', `must be one of ${MEDIA_CONTENT_TYPES.join(', ')}`);
    }
    if (!Number.isInteger(request.size) || request.size < 1) throw AppError.badInput('size', 'must be a whole number of bytes, at least 1');
    if (request.size > this.settings.maxBytes) {
      throw new AppError(ErrorCode.PAYLOAD_TOO_LARGE, `size: a media file may have at most ${this.settings.maxBytes} bytes`, {
        fields: [{ field: 'size', message: `must be at most ${this.settings.maxBytes} bytes` }],
      });
    }
    const brandId = await this.brandFor(request.brandId);

    const file = new MediaFile();
    file.ownerId = this.reach.ownerId;
    file.brandId = brandId;
    file.filename = filename;
    file.contentType = contentType;
    file.size = request.size;
    file.storageKey = `media/${file.id}`;
    file.source = MediaSource.upload;
    const upload = await this.settings.storage.presignPut(file.storageKey, {
      contentType,
      size: request.size,
      expiresInSeconds: UPLOAD_URL_TTL_SECONDS,
      baseUrl: this.settings.publicUrl,
    });
    file.uploadExpiresAt = upload.expiresAt;
    await this.em.persist(file).flush();
    return { id: file.id, uploadUrl: upload.url, method: upload.method, headers: upload.headers, expiresAt: upload.expiresAt };
  }

  /** Files in reach whose bytes have arrived, newest first. */
  async list(window: Window): Promise<Slice<MediaFile>> {
    await this.settleUploads();
    const [items, total] = await this.em.findAndCount(
      MediaFile,
      { ...this.reach.filter(), status: MediaStatus.ready },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: window.limit, offset: window.offset },
    );
    return { items, total };
  }

  /**
   * Marks uploads whose bytes arrived (exactly the declared size) as ready. Only uploads whose URL
   * could still be in use or was used are looked at; storage is asked, never the client.
   */
  private async settleUploads(): Promise<void> {
    const pending = await this.em.find(
      MediaFile,
      { ...this.reach.filter(), status: MediaStatus.pending, uploadExpiresAt: { $gt: new Date(Date.now() - 86_400_000) } },
      { orderBy: { createdAt: 'desc' }, limit: 100 },
    );
    if (!pending.length) return;
    const sizes = await Promise.all(pending.map((file) => this.settings.storage.size(file.storageKey)));
    const arrived = pending.filter((file, index) => sizes[index] === file.size).map((file) => file.id);
    if (arrived.length) {
      await this.em.nativeUpdate(MediaFile, { id: { $in: arrived }, status: MediaStatus.pending }, { status: MediaStatus.ready, readyAt: new Date() });
      for (const file of pending) if (arrived.includes(file.id)) this.em.getUnitOfWork().unsetIdentity(file);
    }
  }

  /** A file in reach that is ready, or null. */
  async find(id: string): Promise<MediaFile | null> {
    if (!isUuid(id)) return null;
    await this.settleUploads();
    return this.em.findOne(MediaFile, { id, ...this.reach.filter(), status: MediaStatus.ready });
  }

  /** Stores bytes made by the platform itself (a generated image) as a ready media file. */
  async storeGenerated(image: { bytes: Buffer; contentType: string; prompt: string; brandId: string | null; filename: string }): Promise<MediaFile> {
    const file = new MediaFile();
    file.ownerId = this.reach.ownerId;
    file.brandId = image.brandId;
    file.filename = image.filename;
    file.contentType = image.contentType;
    file.size = image.bytes.length;
    file.storageKey = `media/${file.id}`;
    file.source = MediaSource.ai;
    file.prompt = image.prompt;
    file.status = MediaStatus.ready;
    file.readyAt = new Date();
    await this.settings.storage.put(file.storageKey, Readable.from([image.bytes]), { contentType: image.contentType, maxBytes: this.settings.maxBytes });
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
      if (!this.reach.everyBrand) throw AppError.badInput('brandId', 'is required: this API key reaches only some brands');
      return null;
    }
    const brand =
      isUuid(brandId) && this.reach.covers(brandId) ? await this.em.findOne(Brand, { id: brandId, ownerId: this.reach.ownerId }, { fields: ['id'] }) : null;
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

/** Which of `ids` are media files inside `reach`, read in `em` (the caller's transaction): what a post may carry. */
export async function mediaInReach(em: EntityManager, reach: Reach, ids: readonly string[]): Promise<ReadonlySet<string>> {
  const valid = ids.filter(isUuid);
  if (!valid.length) return new Set();
  const found = await em.find(MediaFile, { id: { $in: valid }, ...reach.filter() }, { fields: ['id'] });
  return new Set(found.map((file) => file.id));
}

function cleanFilename(value: unknown): string {
  const text = typeof value === 'string' ? value : '';
  // Only the last path segment is a name; control characters have no place in one.
  const name = text.split(/[\\/]/).pop()!.replace(/\p{Cc}/gu, '').trim();
  if (!name) throw AppError.badInput('filename', 'is required');
  if (name.length > FILENAME_MAX) throw AppError.badInput('filename', `must be at most ${FILENAME_MAX} characters`);
  return name;
}
