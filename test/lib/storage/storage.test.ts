import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import S3rver from 's3rver';
import { loadConfig } from '#lib/config.js';
import { listen, type RunningServer } from '#lib/http/http.js';
import { createLogger } from '#lib/observability/logger.js';
import { createRestApp } from '#lib/rest/rest.js';
import { contentDisposition } from '#lib/http/content-disposition.js';
import { createStorage } from '#lib/storage/create-storage.js';
import { storageRouter } from '#lib/storage/storage-router.js';
import type { ObjectStorage } from '#lib/storage/storage.js';
import { commitUpload, presignUpload, stagingKeyOf, type UploadPolicy } from '#lib/storage/uploads.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const IMAGES: UploadPolicy = { maxBytes: 1000, allowedTypes: ['image/png'] };

const root = mkdtempSync(path.join(os.tmpdir(), 'storage-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Backend {
  storage: ObjectStorage;
  baseUrl: string;
  /** Every object key or file left in the backend, partial ones included. */
  leftovers(): string[];
  stop(): Promise<void>;
}

async function fileBackend(): Promise<Backend> {
  const dataDir = path.join(root, 'file');
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const storage = createStorage(config);
  const app = createRestApp({
    name: 'storage-test',
    config,
    logger: createLogger(config),
    routes: [],
    routers: [storageRouter(storage, config)],
  });
  const server: RunningServer = await listen(app, 0, '127.0.0.1');
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(path.join(dir, entry.name)) : [entry.name],
    );
  return {
    storage,
    baseUrl: server.url,
    leftovers: () => walk(path.join(dataDir, 'storage')),
    stop: () => server.close(),
  };
}

async function s3Backend(): Promise<Backend> {
  const directory = path.join(root, 's3');
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    directory,
    silent: true,
    configureBuckets: [{ name: 'platform' }],
  });
  const { port } = await server.run();
  const config = loadConfig({
    DATA_DIR: path.join(root, 's3-data'),
    STORAGE_URL: 's3://platform',
    S3_ENDPOINT: `http://127.0.0.1:${port}`,
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
  });
  const storage = createStorage(config);
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(path.join(dir, entry.name)) : [entry.name],
    );
  return {
    storage,
    baseUrl: 'unused',
    leftovers: () => walk(path.join(directory, 'platform')).filter((name) => name.endsWith('._S3rver_object')),
    stop: () => server.close(),
  };
}

describe.each([
  { name: 'local files', make: fileBackend },
  { name: 'S3 protocol (s3rver)', make: s3Backend },
])('storage on $name', ({ make }) => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await make();
  });
  afterAll(async () => {
    await backend?.stop();
  });

  it('streams bytes in and out with size and SHA-256', async () => {
    const { storage } = backend;
    const written = await storage.put('notes/a.txt', Readable.from([Buffer.from('hello '), Buffer.from('world')]), {
      contentType: 'text/plain',
      maxBytes: 100,
    });
    expect(written).toEqual({ size: 11, sha256: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9' });
    expect(await storage.size('notes/a.txt')).toBe(11);
    expect(await storage.sha256('notes/a.txt')).toBe(written.sha256);
    const { stream, size } = await storage.open('notes/a.txt');
    let text = '';
    for await (const chunk of stream) text += chunk;
    expect({ text, size }).toEqual({ text: 'hello world', size: 11 });
    await storage.delete('notes/a.txt');
    expect(await storage.size('notes/a.txt')).toBeNull();
    await expect(storage.open('notes/a.txt')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await storage.check()).toBe(true);
  });

  it('stops at the byte limit and keeps nothing', async () => {
    const before = backend.leftovers().length;
    const big = Readable.from(
      (function* () {
        for (let i = 0; i < 20; i++) yield Buffer.alloc(64 * 1024, i);
      })(),
    );
    await expect(
      backend.storage.put('big/file.bin', big, { contentType: 'application/octet-stream', maxBytes: 256 * 1024 }),
    ).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
    });
    expect(await backend.storage.size('big/file.bin')).toBeNull();
    expect(backend.leftovers().length).toBe(before);
  });

  it('refuses keys that could leave the store', async () => {
    await expect(
      backend.storage.put('../escape', Readable.from(['x']), { contentType: 'text/plain', maxBytes: 10 }),
    ).rejects.toThrow(/unsafe/);
  });

  it('hands out an upload URL that accepts the declared bytes', async () => {
    const upload = await backend.storage.presignPut('uploads/photo.png', {
      contentType: 'image/png',
      size: 4,
      expiresInSeconds: 60,
      baseUrl: backend.baseUrl,
    });
    expect(upload.method).toBe('PUT');
    expect(upload.expiresAt.getTime()).toBeGreaterThan(Date.now());
    const response = await fetch(upload.url, {
      method: 'PUT',
      headers: upload.headers,
      body: Buffer.from([1, 2, 3, 4]),
    });
    expect(response.status).toBe(200);
    expect(await backend.storage.size('uploads/photo.png')).toBe(4);
    const download = await backend.storage.presignGet('uploads/photo.png', {
      expiresInSeconds: 60,
      baseUrl: backend.baseUrl,
      contentType: 'image/png',
    });
    const bytes = Buffer.from(await (await fetch(download)).arrayBuffer());
    expect([...bytes]).toEqual([1, 2, 3, 4]);
  });
});

describe.each([
  { name: 'local files', make: fileBackend, lateUploads: 'refused' },
  { name: 'S3 protocol (s3rver)', make: s3Backend, lateUploads: 'kept aside' },
])('the upload protocol on $name', ({ make, lateUploads }) => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await make();
  });
  afterAll(async () => {
    await backend?.stop();
  });
  const read = async (key: string) => {
    const chunks: Buffer[] = [];
    for await (const chunk of (await backend.storage.open(key)).stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };

  it('moves an object only into a key that does not exist yet', async () => {
    const { storage } = backend;
    await storage.put('moving/a', Readable.from(['first']), { contentType: 'text/plain', maxBytes: 100 });
    await storage.move('moving/a', 'moved/a');
    expect(await storage.size('moving/a')).toBeNull();
    expect((await read('moved/a')).toString()).toBe('first');
    await storage.put('moving/a', Readable.from(['second']), { contentType: 'text/plain', maxBytes: 100 });
    await expect(storage.move('moving/a', 'moved/a')).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await read('moved/a')).toString()).toBe('first');
    await expect(storage.move('moving/absent', 'moved/b')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it(`commits checked bytes into place; bytes sent to the URL after the commit are ${lateUploads}, never the committed ones`, async () => {
    const { storage, baseUrl } = backend;
    const declared = { key: 'protocol/photo', contentType: 'image/png', size: PNG.length };
    const upload = await presignUpload(storage, declared, { expiresInSeconds: 60, baseUrl });
    await expect(commitUpload(storage, declared, IMAGES)).rejects.toMatchObject({
      code: 'CONFLICT',
      extensions: { state: 'awaiting-upload' },
    });
    expect(
      (await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: new Uint8Array(PNG) })).status,
    ).toBe(200);
    // The bytes wait in the staging key until the commit has checked them.
    expect(await storage.size(declared.key)).toBeNull();
    expect(await storage.size(stagingKeyOf(declared.key))).toBe(PNG.length);
    expect(await commitUpload(storage, declared, IMAGES, { hash: true })).toEqual({
      size: PNG.length,
      sha256: createHash('sha256').update(PNG).digest('hex'),
    });
    expect(await storage.size(stagingKeyOf(declared.key))).toBeNull();

    const other = Buffer.from(PNG);
    other[other.length - 5] ^= 0xff;
    const late = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: new Uint8Array(other) });
    expect(late.status).toBe(lateUploads === 'refused' ? 409 : 200);
    await expect(commitUpload(storage, declared, IMAGES)).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await read(declared.key)).equals(PNG)).toBe(true);
  });

  it('refuses bytes that are not what was declared, deleting them so the URL may be used again', async () => {
    const { storage, baseUrl } = backend;
    const declared = { key: 'protocol/fake', contentType: 'image/png', size: 8 };
    const upload = await presignUpload(storage, declared, { expiresInSeconds: 60, baseUrl });
    expect((await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: '%PDF-1.4' })).status).toBe(200);
    await expect(commitUpload(storage, declared, IMAGES)).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      fields: [{ field: 'contentType' }],
    });
    expect(await storage.size(stagingKeyOf(declared.key))).toBeNull();
    expect(await storage.size(declared.key)).toBeNull();
    expect(
      (await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: new Uint8Array(PNG.subarray(0, 8)) }))
        .status,
    ).toBe(200);
    expect((await commitUpload(storage, declared, IMAGES)).size).toBe(8);
  });
});

describe('signed local URLs', () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await fileBackend();
  });
  afterAll(async () => {
    await backend?.stop();
  });

  it('reject a forged, expired, replayed, mistyped or wrongly sized upload', async () => {
    const { storage, baseUrl } = backend;
    const grant = await storage.presignPut('checked/a.pdf', {
      contentType: 'application/pdf',
      size: 3,
      expiresInSeconds: 60,
      baseUrl,
    });
    const forged = grant.url.replace(/\/storage\/([^.]+)\./, (_m, body: string) => `/storage/${body.slice(0, -2)}AA.`);
    expect((await fetch(forged, { method: 'PUT', headers: grant.headers, body: 'abc' })).status).toBe(403);
    const expired = await storage.presignPut('checked/b.pdf', {
      contentType: 'application/pdf',
      size: 3,
      expiresInSeconds: -1,
      baseUrl,
    });
    expect((await fetch(expired.url, { method: 'PUT', headers: expired.headers, body: 'abc' })).status).toBe(403);
    const wrongType = await fetch(grant.url, { method: 'PUT', headers: { 'content-type': 'text/html' }, body: 'abc' });
    expect(wrongType.status).toBe(400);
    expect(((await wrongType.json()) as { errors: { field: string }[] }).errors[0].field).toBe('content-type');
    expect((await fetch(grant.url, { method: 'PUT', headers: grant.headers, body: 'abcd' })).status).toBe(400);
    expect(await storage.size('checked/a.pdf')).toBeNull();
    expect((await fetch(grant.url, { method: 'PUT', headers: grant.headers, body: 'abc' })).status).toBe(200);
    expect((await fetch(grant.url, { method: 'PUT', headers: grant.headers, body: 'xyz' })).status).toBe(409);
    expect(await storage.sha256('checked/a.pdf')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('writes a Content-Disposition that is safe for any file name', () => {
    expect(contentDisposition('report "final".pdf')).toBe(
      `attachment; filename="report _final_.pdf"; filename*=UTF-8''report%20%22final%22.pdf`,
    );
    expect(contentDisposition('naïve\r\nX-Evil: 1.txt')).not.toMatch(/[\r\n]/);
  });
});
