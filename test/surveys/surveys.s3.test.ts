import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import S3rver from 's3rver';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { freePort } from '#test/support/ports.js';
import { linkIn, MailCatcher } from './support.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The same two-step upload against the S3 protocol (s3rver): presigned PUT and GET URLs come from S3, not from the service. */
describe('venue survey assets on S3', () => {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'surveys-s3-'));
  const s3 = new S3rver({
    port: 0,
    address: '127.0.0.1',
    directory,
    silent: true,
    configureBuckets: [{ name: 'surveys' }],
  });
  const mail = new MailCatcher();
  let platform: TestPlatform;
  let base: string;
  let s3Url: string;
  let auth: Record<string, string>;

  beforeAll(async () => {
    const { port } = await s3.run();
    s3Url = `http://127.0.0.1:${port}`;
    await mail.start();
    platform = await startTestPlatform({
      SURVEYS_REST_PORT: String(await freePort()),
      SMTP_URL: `smtp://127.0.0.1:${mail.port}`,
      ALLOWED_EMAIL_DOMAINS: 'field.example',
      STORAGE_URL: 's3://surveys',
      S3_ENDPOINT: s3Url,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    });
    base = platform.urls.surveysRest;
  });

  afterAll(async () => {
    await platform?.stop();
    await mail.stop();
    await s3.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('signs in, uploads to a presigned S3 URL, commits, downloads and exports', async () => {
    expect((await rest('POST', `${base}/api/auth/magic/request`, { email: 'erin@field.example' })).status).toBe(202);
    const received = await mail.waitFor('erin@field.example');
    const token = linkIn(received, 'http://localhost:5173/auth/magic?')!.searchParams.get('token');
    const verified = await rest('POST', `${base}/api/auth/magic/verify`, { token });
    expect(verified.status).toBe(200);
    auth = { authorization: `Bearer ${verified.body.token}` };

    const survey = await rest('POST', `${base}/api/surveys`, { venueName: 'Harbour Loft' }, auth);
    expect(survey.status).toBe(201);
    const presigned = await rest(
      'POST',
      `${base}/api/surveys/${survey.body.id}/assets/presign`,
      { filename: 'loft.png', contentType: 'image/png', size: PNG.length },
      auth,
    );
    expect(presigned.status).toBe(200);
    expect(presigned.body.uploadUrl.startsWith(`${s3Url}/surveys/staging/surveys/`)).toBe(true);
    expect(presigned.body.headers).toEqual({ 'content-type': 'image/png', 'content-length': String(PNG.length) });

    const commit = () =>
      rest(
        'POST',
        `${base}/api/surveys/${survey.body.id}/assets/commit`,
        { assetId: presigned.body.assetId, sha256: sha256(PNG) },
        auth,
      );
    expect((await commit()).status).toBe(409);
    const put = await fetch(presigned.body.uploadUrl, { method: 'PUT', headers: presigned.body.headers, body: PNG });
    expect(put.status).toBe(200);
    const committed = await commit();
    expect(committed.status).toBe(200);
    expect(committed.body).toMatchObject({ status: 'committed', sha256: sha256(PNG), size: PNG.length });
    expect((await commit()).status).toBe(409);
    // A presigned S3 URL cannot be withdrawn: what it takes after the commit lands in the staging key, never in the asset.
    const other = Buffer.from(PNG);
    other[other.length - 5] ^= 0xff;
    expect(
      (await fetch(presigned.body.uploadUrl, { method: 'PUT', headers: presigned.body.headers, body: other })).status,
    ).toBe(200);
    expect((await commit()).status).toBe(409);

    const meta = await rest('GET', `${base}/api/assets/${presigned.body.assetId}`, undefined, auth);
    expect(meta.status).toBe(200);
    expect(meta.body.downloadUrl.startsWith(`${s3Url}/surveys/`)).toBe(true);
    const download = await fetch(meta.body.downloadUrl);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(PNG)).toBe(true);

    const html = await fetch(`${base}/api/surveys/${survey.body.id}/export?format=html`, { headers: auth });
    expect(html.status).toBe(200);
    expect(await html.text()).toContain(`<img src="${s3Url}/surveys/`);
  });
});
