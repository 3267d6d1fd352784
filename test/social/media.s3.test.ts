import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import S3rver from 's3rver';
import { sweepMediaUploads } from '#subgraphs/social/media/media.service.js';
import { TINY_PNG } from '#test/social-reach/fake-image-api.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

/**
 * Media on the S3 protocol (s3rver): the upload URL is S3's own, so nobody hears the bytes arrive;
 * reading media runs the commit (check and move out of the staging key), as it does on the file store.
 */
describe('social media on S3', () => {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'media-s3-'));
  const s3 = new S3rver({
    port: 0,
    address: '127.0.0.1',
    directory,
    silent: true,
    configureBuckets: [{ name: 'media' }],
  });
  let platform: TestPlatform;
  let base: string;
  let owner: Record<string, string>;

  beforeAll(async () => {
    const { port } = await s3.run();
    platform = await startTestPlatform({
      STORAGE_URL: 's3://media',
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    });
    base = platform.urls.socialRest;
    owner = { authorization: `Bearer ${await platform.token('s3-owner')}` };
  });

  afterAll(async () => {
    await platform?.stop();
    await s3.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const upload = (filename: string, size: number) =>
    rest('POST', `${base}/api/media/upload`, { filename, contentType: 'image/png', size }, owner);
  const put = (grant: { uploadUrl: string; headers: Record<string, string> }, bytes: Buffer) =>
    fetch(grant.uploadUrl, { method: 'PUT', headers: grant.headers, body: new Uint8Array(bytes) });
  const listed = async () =>
    (await rest('GET', `${base}/api/media`, undefined, owner)).body.data as Array<{ id: string; url: string }>;

  it('lists a file once its bytes are checked and moved into place; what the URL takes afterwards changes nothing', async () => {
    const grant = (await upload('cat.png', TINY_PNG.length)).body;
    expect(grant.uploadUrl).toMatch(/\/media\/staging\/media\//);
    expect(await listed()).toEqual([]);
    expect((await put(grant, TINY_PNG)).status).toBe(200);
    const [file] = await listed();
    expect(file.id).toBe(grant.id);

    const other = Buffer.from(TINY_PNG);
    other[other.length - 5] ^= 0xff;
    expect((await put(grant, other)).status).toBe(200);
    expect((await listed()).map((m) => m.id)).toEqual([grant.id]);
    const bytes = Buffer.from(await (await fetch((await listed())[0].url)).arrayBuffer());
    expect(bytes.equals(TINY_PNG)).toBe(true);
  });

  it('never lists bytes that are not the declared type, and sweeps them with their row once expired', async () => {
    const fake = (await upload('fake.png', 8)).body;
    expect((await put(fake, Buffer.from('%PDF-1.4'))).status).toBe(200);
    expect((await listed()).map((m) => m.id)).not.toContain(fake.id);
    const { runtime, orm } = platform.subgraphs.social;
    expect(await runtime.media.storage.size(`staging/media/${fake.id}`)).toBeNull();
    await sweepMediaUploads(orm.em.fork(), runtime.media, new Date(Date.now() + 3600_000));
    const rows = await orm.em
      .fork()
      .getConnection()
      .execute('select id from social.media_file where id = ?', [fake.id]);
    expect(rows).toEqual([]);
  });
});
