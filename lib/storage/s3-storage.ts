import { pipeline as pipeStreams, type Readable } from 'node:stream';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { AppError, ErrorCode } from '../errors.js';
import { contentDisposition } from '../http/content-disposition.js';
import {
  checkKey,
  type ObjectStorage,
  type PresignedUpload,
  type PresignOptions,
  type WrittenObject,
} from './storage.js';
import { meter, readStart, sha256OfStream } from './streams.js';

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
