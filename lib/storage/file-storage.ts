import { createReadStream, createWriteStream } from 'node:fs';
import { link, mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError, ErrorCode } from '../errors.js';
import { randomToken, signPayload, verifyPayload, type Keys } from '../secrets.js';
import {
  checkKey,
  type ObjectStorage,
  type PresignedUpload,
  type PresignOptions,
  type WrittenObject,
} from './storage.js';
import { meter, readStart, sha256OfStream } from './streams.js';

interface SignedObjectToken {
  k: string;
  m: 'PUT' | 'GET';
  e: number;
  ct?: string;
  n?: number;
  fn?: string;
  /** PUT: where the commit moves the bytes; once something is there the URL takes nothing more. */
  f?: string;
}

/** Local files under one folder; uploads and downloads by URL go through signed, expiring tokens. */
export class FileStorage implements ObjectStorage {
  readonly kind = 'file' as const;

  constructor(
    private readonly root: string,
    private readonly signingKey: Keys,
  ) {}

  private pathOf(key: string): string {
    return path.join(this.root, checkKey(key));
  }

  /**
   * `exclusive`: the target is created only if it does not exist yet, atomically (a link fails when the
   * name is taken), so two uploads to one signed URL cannot both land, nor one replace the other's bytes.
   */
  async put(
    key: string,
    body: Readable,
    options: { contentType: string; maxBytes: number; exclusive?: boolean },
  ): Promise<WrittenObject> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    // Written aside and moved into place, so no reader ever sees half a file.
    const partial = `${target}.partial-${randomToken(6)}`;
    const { transform, result } = meter(options.maxBytes);
    try {
      await pipeline(body, transform, createWriteStream(partial, { flags: 'wx' }));
      if (!options.exclusive) await rename(partial, target);
      else {
        await link(partial, target).catch((error: NodeJS.ErrnoException) => {
          throw error.code === 'EEXIST' ? new AppError(ErrorCode.CONFLICT, 'This upload has already been made') : error;
        });
        await rm(partial, { force: true });
      }
      return result();
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  async open(key: string): Promise<{ stream: Readable; size: number }> {
    const size = await this.size(key);
    if (size === null) throw AppError.notFound('Stored file');
    return { stream: createReadStream(this.pathOf(key)), size };
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.pathOf(key))).size;
    } catch {
      return null;
    }
  }

  async sha256(key: string): Promise<string> {
    return sha256OfStream((await this.open(key)).stream);
  }

  async readStart(key: string, bytes: number): Promise<Buffer> {
    if ((await this.size(key)) === null) throw AppError.notFound('Stored file');
    return readStart(createReadStream(this.pathOf(key), { start: 0, end: Math.max(bytes - 1, 0) }), bytes);
  }

  async move(from: string, to: string): Promise<void> {
    const target = this.pathOf(to);
    await mkdir(path.dirname(target), { recursive: true });
    await link(this.pathOf(from), target).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST') throw new AppError(ErrorCode.CONFLICT, 'The upload has already been committed');
      if (error.code === 'ENOENT') throw AppError.notFound('Stored file');
      throw error;
    });
    await rm(this.pathOf(from), { force: true });
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async presignPut(key: string, options: PresignOptions): Promise<PresignedUpload> {
    const expiresAt = new Date(Date.now() + options.expiresInSeconds * 1000);
    const token = signPayload(this.signingKey, {
      k: checkKey(key),
      m: 'PUT',
      e: expiresAt.getTime(),
      ct: options.contentType,
      n: options.size,
      ...(options.commitKey ? { f: checkKey(options.commitKey) } : {}),
    } satisfies SignedObjectToken);
    return {
      url: `${options.baseUrl}/storage/${token}`,
      method: 'PUT',
      headers: { 'content-type': options.contentType },
      expiresAt,
    };
  }

  async presignGet(
    key: string,
    options: { expiresInSeconds: number; baseUrl: string; contentType?: string; filename?: string },
  ): Promise<string> {
    const token = signPayload(this.signingKey, {
      k: checkKey(key),
      m: 'GET',
      e: Date.now() + options.expiresInSeconds * 1000,
      ct: options.contentType,
      fn: options.filename,
    } satisfies SignedObjectToken);
    return `${options.baseUrl}/storage/${token}`;
  }

  async check(): Promise<boolean> {
    try {
      await mkdir(this.root, { recursive: true });
      return true;
    } catch {
      return false;
    }
  }

  /** Checks a token from a signed URL: not forged, not expired, made for this method. */
  verify(token: string, method: 'PUT' | 'GET'): SignedObjectToken {
    const payload = verifyPayload<SignedObjectToken>(this.signingKey, token);
    if (!payload || payload.m !== method) throw new AppError(ErrorCode.FORBIDDEN, 'This URL is not valid');
    if (payload.e < Date.now()) throw new AppError(ErrorCode.FORBIDDEN, 'This URL has expired');
    return payload;
  }
}
