import type { Readable } from 'node:stream';

/** What a finished write tells: how many bytes arrived and their SHA-256 (hex). */
export interface WrittenObject {
  size: number;
  sha256: string;
}

/** Where a client sends bytes itself: a presigned S3 PUT, or a signed URL served by the platform. */
export interface PresignedUpload {
  url: string;
  method: 'PUT';
  headers: Record<string, string>;
  expiresAt: Date;
}

export interface PresignOptions {
  contentType: string;
  size: number;
  expiresInSeconds: number;
  /** Public base address of the REST service that serves signed local URLs (`/storage/...`). */
  baseUrl: string;
  /**
   * Where a commit moves the bytes (`lib/storage/uploads.ts`): the file store's upload route refuses bytes once
   * an object is there, so the URL is useless after its commit. (An S3 URL cannot be withdrawn: what
   * it writes afterwards lands in the staging key, which nothing reads any more.)
   */
  commitKey?: string;
}

/**
 * The storage layer for bytes (attachments, media, survey assets). GraphQL only ever carries the
 * keys. `STORAGE_URL` chooses the backend: `file://` (default, under DATA_DIR) or `s3://bucket`.
 */
export interface ObjectStorage {
  readonly kind: 'file' | 's3';
  /** Streams `body` into `key`; over `maxBytes` it stops, keeps nothing and throws PAYLOAD_TOO_LARGE. */
  put(key: string, body: Readable, options: { contentType: string; maxBytes: number }): Promise<WrittenObject>;
  /** The object's bytes as a stream, with its size; NOT_FOUND when absent. */
  open(key: string): Promise<{ stream: Readable; size: number }>;
  /** Size of the object, or null when absent. */
  size(key: string): Promise<number | null>;
  /** The object's first `bytes` bytes (fewer when it is shorter); NOT_FOUND when absent. */
  readStart(key: string, bytes: number): Promise<Buffer>;
  /**
   * Moves `from` to `to`, which must not exist yet (CONFLICT otherwise; NOT_FOUND when `from` is
   * absent): the file store links the file into place exclusively, S3 copies and deletes.
   */
  move(from: string, to: string): Promise<void>;
  /** SHA-256 (hex) of the stored bytes. */
  sha256(key: string): Promise<string>;
  delete(key: string): Promise<void>;
  presignPut(key: string, options: PresignOptions): Promise<PresignedUpload>;
  presignGet(
    key: string,
    options: { expiresInSeconds: number; baseUrl: string; contentType?: string; filename?: string },
  ): Promise<string>;
  /** True when the backend answers (health checks). */
  check(): Promise<boolean>;
}

/** A key as the stores take it: path segments of letters, digits, `_`, `.` and `-`, never `.` or `..`. */
export function checkKey(key: string): string {
  if (!/^[\w.-]+(\/[\w.-]+)*$/.test(key) || key.split('/').some((part) => part === '..' || part === '.')) {
    throw new Error(`unsafe storage key ${key}`);
  }
  return key;
}
