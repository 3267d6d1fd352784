import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { link, mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline as pipeStreams, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import express, { type Request, type Response, type Router } from 'express';
import type { Config } from '../config.js';
import { corsFor } from '../http/cors.js';
import { AppError, ErrorCode } from '../errors.js';
import { deriveKey, masterKey, randomToken, signPayload, verifyPayload } from '../secrets.js';

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

/** Counts bytes and hashes them on the way through; errors past the limit. */
function meter(maxBytes: number) {
  const hash = createHash('sha256');
  let size = 0;
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > maxBytes)
        return callback(new AppError(ErrorCode.PAYLOAD_TOO_LARGE, `The file is larger than ${maxBytes} bytes`));
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  return { transform, result: (): WrittenObject => ({ size, sha256: hash.digest('hex') }) };
}

/** The first `bytes` bytes of a stream, which is closed as soon as they are in. */
async function readStart(stream: Readable, bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    read += chunk.length;
    if (read >= bytes) break;
  }
  stream.destroy();
  return Buffer.concat(chunks).subarray(0, bytes);
}

async function sha256OfStream(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function checkKey(key: string): string {
  if (!/^[\w.-]+(\/[\w.-]+)*$/.test(key) || key.split('/').some((part) => part === '..' || part === '.')) {
    throw new Error(`unsafe storage key ${key}`);
  }
  return key;
}

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
    private readonly signingKey: Buffer,
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

/**
 * The AWS SDK's three packages, loaded when an S3 storage is first used: a process on file storage
 * (the default) never needs them, and loading them costs every process about 5 MB of heap and more of code.
 */
async function loadS3Sdk() {
  const [client, storage, presigner] = await Promise.all([
    import('@aws-sdk/client-s3'),
    import('@aws-sdk/lib-storage'),
    import('@aws-sdk/s3-request-presigner'),
  ]);
  return { ...client, Upload: storage.Upload, getSignedUrl: presigner.getSignedUrl };
}

/** S3 or an S3-compatible server (MinIO), with real presigned URLs. */
export class S3Storage implements ObjectStorage {
  readonly kind = 's3' as const;
  private connection?: Promise<{ client: S3Client; sdk: Awaited<ReturnType<typeof loadS3Sdk>> }>;

  constructor(
    private readonly clientConfig: S3ClientConfig,
    private readonly bucket: string,
  ) {}

  /** The SDK and one client, made on first use and shared by every call after. */
  private s3() {
    this.connection ??= loadS3Sdk().then((sdk) => ({ client: new sdk.S3Client(this.clientConfig), sdk }));
    return this.connection;
  }

  async put(key: string, body: Readable, options: { contentType: string; maxBytes: number }): Promise<WrittenObject> {
    const { client, sdk } = await this.s3();
    const { transform, result } = meter(options.maxBytes);
    // pipeline, not pipe: an error of either stream is handled and ends the other; the upload sees it.
    const metered = pipeStreams(body, transform, () => undefined);
    const upload = new sdk.Upload({
      client,
      params: { Bucket: this.bucket, Key: checkKey(key), Body: metered, ContentType: options.contentType },
    });
    try {
      await upload.done();
      return result();
    } catch (error) {
      await upload.abort().catch(() => undefined);
      await this.delete(key).catch(() => undefined);
      throw error;
    }
  }

  async open(key: string): Promise<{ stream: Readable; size: number }> {
    const { client, sdk } = await this.s3();
    try {
      const object = await client.send(new sdk.GetObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
      return { stream: object.Body as Readable, size: Number(object.ContentLength ?? 0) };
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') throw AppError.notFound('Stored file');
      throw error;
    }
  }

  async size(key: string): Promise<number | null> {
    const { client, sdk } = await this.s3();
    try {
      const head = await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
      return Number(head.ContentLength ?? 0);
    } catch {
      return null;
    }
  }

  async sha256(key: string): Promise<string> {
    return sha256OfStream((await this.open(key)).stream);
  }

  async readStart(key: string, bytes: number): Promise<Buffer> {
    const { client, sdk } = await this.s3();
    try {
      const object = await client.send(
        new sdk.GetObjectCommand({
          Bucket: this.bucket,
          Key: checkKey(key),
          Range: `bytes=0-${Math.max(bytes - 1, 0)}`,
        }),
      );
      return await readStart(object.Body as Readable, bytes);
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') throw AppError.notFound('Stored file');
      throw error;
    }
  }

  /**
   * S3 has no exclusive create on copy that every S3-speaking server knows, so the target is looked
   * at first; a commit moves only from a key no URL writes to (`lib/storage/uploads.ts`), and its row's state
   * change is conditional.
   */
  async move(from: string, to: string): Promise<void> {
    if ((await this.size(to)) !== null) throw new AppError(ErrorCode.CONFLICT, 'The upload has already been committed');
    const { client, sdk } = await this.s3();
    try {
      await client.send(
        new sdk.CopyObjectCommand({
          Bucket: this.bucket,
          Key: checkKey(to),
          CopySource: `${this.bucket}/${checkKey(from).split('/').map(encodeURIComponent).join('/')}`,
        }),
      );
    } catch (error) {
      const name = (error as { name?: string }).name;
      if (name === 'NoSuchKey') throw AppError.notFound('Stored file');
      throw error;
    }
    await this.delete(from);
  }

  async delete(key: string): Promise<void> {
    const { client, sdk } = await this.s3();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
  }

  async presignPut(key: string, options: PresignOptions): Promise<PresignedUpload> {
    const { client, sdk } = await this.s3();
    const command = new sdk.PutObjectCommand({
      Bucket: this.bucket,
      Key: checkKey(key),
      ContentType: options.contentType,
      ContentLength: options.size,
    });
    const url = await sdk.getSignedUrl(client, command, {
      expiresIn: options.expiresInSeconds,
      signableHeaders: new Set(['content-type', 'content-length']),
    });
    return {
      url,
      method: 'PUT',
      headers: { 'content-type': options.contentType, 'content-length': String(options.size) },
      expiresAt: new Date(Date.now() + options.expiresInSeconds * 1000),
    };
  }

  async presignGet(
    key: string,
    options: { expiresInSeconds: number; contentType?: string; filename?: string },
  ): Promise<string> {
    const { client, sdk } = await this.s3();
    const command = new sdk.GetObjectCommand({
      Bucket: this.bucket,
      Key: checkKey(key),
      ResponseContentType: options.contentType,
      ResponseContentDisposition: options.filename ? contentDisposition(options.filename, 'inline') : undefined,
    });
    return sdk.getSignedUrl(client, command, { expiresIn: options.expiresInSeconds });
  }

  async check(): Promise<boolean> {
    try {
      const { client, sdk } = await this.s3();
      await client.send(new sdk.HeadBucketCommand({ Bucket: this.bucket }));
      return true;
    } catch {
      return false;
    }
  }
}

export function createStorage(config: Config): ObjectStorage {
  const url = new URL(config.storageUrl);
  if (url.protocol === 's3:') {
    const clientConfig: S3ClientConfig = {
      region: config.env.S3_REGION,
      endpoint: config.env.S3_ENDPOINT,
      forcePathStyle: Boolean(config.env.S3_ENDPOINT),
      credentials: { accessKeyId: config.env.S3_ACCESS_KEY_ID!, secretAccessKey: config.env.S3_SECRET_ACCESS_KEY! },
    };
    return new S3Storage(clientConfig, url.hostname);
  }
  return new FileStorage(fileURLToPath(url), deriveKey(masterKey(config), 'storage-urls'));
}

/**
 * A `Content-Disposition` value that is safe whatever the file name: an ASCII fallback with
 * quotes and control characters removed, and the exact name in RFC 5987 `filename*`.
 */
export function contentDisposition(filename: string, kind: 'attachment' | 'inline' = 'attachment'): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_').slice(0, 200) || 'file';
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * Routes that serve the signed URLs of the local file store (`PUT` and `GET /storage/:token`),
 * mounted by each REST service that hands such URLs out. The PUT must carry the declared
 * content type and exactly the declared size, and never overwrites an object that exists. Upload
 * URLs write staging keys (`lib/storage/uploads.ts`); once the commit moved the bytes into place, the URL
 * takes nothing more.
 */
export function storageRouter(storage: ObjectStorage, config: Pick<Config, 'corsOrigins'>): Router {
  const router = express.Router();
  if (!(storage instanceof FileStorage)) return router;
  // A page uploads to and shows from its signed URLs directly, as it would with S3's (whose bucket has CORS rules of its own).
  router.all('/storage/:token', corsFor(config, ['GET', 'HEAD', 'PUT']));

  router.put('/storage/:token', async (req: Request, res: Response) => {
    const grant = storage.verify(String(req.params.token), 'PUT');
    const sentType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (grant.ct && sentType !== grant.ct.toLowerCase()) {
      throw AppError.badInput('content-type', `must be ${grant.ct}, as declared`);
    }
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (grant.n !== undefined && Number.isFinite(declared) && declared !== grant.n) {
      throw AppError.badInput('content-length', `must be ${grant.n} bytes, as declared`);
    }
    if ((await storage.size(grant.k)) !== null)
      throw new AppError(ErrorCode.CONFLICT, 'This upload has already been made');
    // Committed: the bytes were checked and moved into place, and this URL takes nothing more.
    if (grant.f && (await storage.size(grant.f)) !== null)
      throw new AppError(ErrorCode.CONFLICT, 'This upload has already been committed');
    const written = await storage.put(grant.k, req, {
      contentType: grant.ct ?? 'application/octet-stream',
      maxBytes: grant.n ?? Infinity,
      exclusive: true,
    });
    if (grant.n !== undefined && written.size !== grant.n) {
      await storage.delete(grant.k);
      throw AppError.badInput('body', `has ${written.size} bytes; ${grant.n} were declared`);
    }
    res.status(200).json({ size: written.size, sha256: written.sha256 });
  });

  router.get('/storage/:token', async (req: Request, res: Response) => {
    const grant = storage.verify(String(req.params.token), 'GET');
    const { stream, size } = await storage.open(grant.k);
    res.set({
      'content-type': grant.ct ?? 'application/octet-stream',
      'content-length': String(size),
      'x-content-type-options': 'nosniff',
      'cache-control': 'private, max-age=300',
      ...(grant.fn ? { 'content-disposition': contentDisposition(grant.fn, 'inline') } : {}),
    });
    await pipeline(stream, res);
  });
  return router;
}
