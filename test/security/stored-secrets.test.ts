import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '#lib/config.js';
import { redactUrl } from '#lib/observability/log-redaction.js';
import { createFileOnce, masterKey } from '#lib/secrets.js';
import { AuthService } from '#subgraphs/surveys/sign-in/auth.service.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { LogCollector } from '#test/support/logs.js';
import { freePort } from '#test/support/ports.js';

describe('generated key files', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'key-files-test-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('are created whole or not at all, the first writer winning, with no temporary file left', () => {
    const file = path.join(dataDir, 'once', 'value.txt');
    createFileOnce(file, 'first');
    createFileOnce(file, 'second');
    expect(readFileSync(file, 'utf8')).toBe('first');
    expect(readdirSync(path.dirname(file))).toEqual(['value.txt']);
    const key = masterKey(loadConfig({ DATA_DIR: dataDir }));
    expect(key).toHaveLength(32);
    expect(masterKey(loadConfig({ DATA_DIR: dataDir }))).toEqual(key);
  });

  it('refuse a master key file that does not hold 32 bytes (half written, or damaged)', () => {
    const damaged = mkdtempSync(path.join(os.tmpdir(), 'key-files-damaged-'));
    try {
      mkdirSync(path.join(damaged, 'secrets'));
      writeFileSync(path.join(damaged, 'secrets', 'master.key'), Buffer.alloc(12, 1).toString('base64'));
      expect(() => masterKey(loadConfig({ DATA_DIR: damaged }))).toThrow(/master\.key does not hold 32 bytes/);
    } finally {
      rmSync(damaged, { recursive: true, force: true });
    }
  });
});

describe('request logs', () => {
  it('keep no query value and no token-like path segment', () => {
    expect(redactUrl('/api/integrations/mastodon/callback?state=abc123&code=secret-code')).toBe(
      '/api/integrations/mastodon/callback?state=[redacted]&code=[redacted]',
    );
    expect(redactUrl('/storage/eyJrIjoibWVkaWEvMTIzIiwiZXhwIjoxfQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ')).toBe('/storage/:token');
    expect(redactUrl('/api/contacts/0b7c1a52-4a59-4d53-8a38-0b1d2f4c7a11/notes')).toBe(
      '/api/contacts/0b7c1a52-4a59-4d53-8a38-0b1d2f4c7a11/notes',
    );
  });

  describe('of the running platform', () => {
    let platform: TestPlatform;
    const sink = new LogCollector();
    beforeAll(async () => {
      const port = await freePort();
      platform = await startTestPlatform(
        { LOG_LEVEL: 'trace', SOCIAL_REST_PORT: String(port), SOCIAL_PUBLIC_URL: `http://127.0.0.1:${port}` },
        { logStream: sink },
      );
    });
    afterAll(async () => {
      await platform?.stop();
    });

    it('never show a signed storage grant or an OAuth code, at any level', async () => {
      const owner = { authorization: `Bearer ${await platform.token('logger')}` };
      const grant = await rest(
        'POST',
        `${platform.urls.socialRest}/api/media/upload`,
        { filename: 'a.png', contentType: 'image/png', size: 3 },
        owner,
      );
      expect(grant.status).toBe(200);
      const uploadUrl = new URL(grant.body.uploadUrl as string);
      await fetch(uploadUrl, {
        method: 'PUT',
        headers: { 'content-type': 'image/png' },
        body: new Uint8Array([1, 2, 3]),
      });
      await fetch(
        `${platform.urls.socialRest}/api/integrations/mastodon/callback?state=the-state-value-0123456789&code=the-oauth-code-0123456789`,
        { redirect: 'manual' },
      );
      const grantToken = uploadUrl.pathname.split('/').pop()!;
      const text = JSON.stringify(sink.lines);
      expect(text).toContain('/storage/:token');
      expect(text).not.toContain(grantToken);
      expect(text).not.toContain('the-oauth-code-0123456789');
      expect(text).not.toContain('the-state-value-0123456789');
    });

    it('let only one of two uploads to one signed URL land, whole: the file store creates the target exclusively', async () => {
      const owner = { authorization: `Bearer ${await platform.token('racer')}` };
      const size = 4 * 1024 * 1024;
      const grant = await rest(
        'POST',
        `${platform.urls.socialRest}/api/media/upload`,
        { filename: 'b.png', contentType: 'image/png', size },
        owner,
      );
      // Both are PNGs by their first bytes, so the commit lists whichever landed.
      const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
      const bodies = [1, 2].map((fill) =>
        Buffer.concat([Buffer.from(PNG_SIGNATURE), Buffer.alloc(size - PNG_SIGNATURE.length, fill)]),
      );
      const sent = await Promise.all(
        bodies.map((body) =>
          fetch(grant.body.uploadUrl as string, {
            method: 'PUT',
            headers: { 'content-type': 'image/png' },
            body: new Uint8Array(body),
          }),
        ),
      );
      expect(sent.map((answer) => answer.status).sort()).toEqual([200, 409]);
      const listed = await rest('GET', `${platform.urls.socialRest}/api/media`, undefined, owner);
      const stored = Buffer.from(await (await fetch(listed.body.data[0].url as string)).arrayBuffer());
      expect(stored.equals(bodies[sent[0].status === 200 ? 0 : 1])).toBe(true);
    });
  });
});

describe('sessions and attachment downloads', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform({ ALLOWED_EMAIL_DOMAINS: 'field.example', ADMIN_EMAILS: 'boss@hq.example' });
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('re-check a session against ALLOWED_EMAIL_DOMAINS and ADMIN_EMAILS at every use, not only at sign-in', async () => {
    const { orm, runtime } = platform.subgraphs.surveys;
    // A session made while the address was allowed; then the rules change (a new start with other settings).
    const { token } = await signInDirect(platform, 'worker@field.example');
    const asNow = new AuthService(orm.em.fork(), runtime.signIn);
    expect(await asNow.sessionOf(token)).toMatchObject({ user: { email: 'worker@field.example', isAdmin: false } });
    const narrowed = new AuthService(orm.em.fork(), { ...runtime.signIn, allowedDomains: ['hq.example'] });
    expect(await narrowed.sessionOf(token)).toBeNull();
    const promoted = new AuthService(orm.em.fork(), { ...runtime.signIn, adminEmails: ['worker@field.example'] });
    expect(await promoted.sessionOf(token)).toMatchObject({ user: { isAdmin: true } });
  });

  it('serves attachments with Content-Security-Policy: sandbox', async () => {
    const base = platform.urls.contactsRest;
    const contact = await rest('POST', `${base}/api/contacts`, { firstName: 'Files' });
    const form = new FormData();
    form.append('file', new Blob(['<script>alert(1)</script>'], { type: 'text/html' }), 'page.html');
    const uploaded = await fetch(`${base}/api/contacts/${contact.body.id}/attachments`, { method: 'POST', body: form });
    expect(uploaded.status).toBe(201);
    const { id } = (await uploaded.json()) as { id: string };
    const download = await fetch(`${base}/api/attachments/${id}`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-security-policy')).toBe('sandbox');
    expect(download.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

/** Signs in through the real REST face, reading the token of the link from the database's hash-free side: the mail. */
async function signInDirect(platform: TestPlatform, email: string): Promise<{ token: string }> {
  const { runtime } = platform.subgraphs.surveys;
  const sent: string[] = [];
  const auth = new AuthService(platform.subgraphs.surveys.orm.em.fork(), {
    ...runtime.signIn,
    mailer: {
      kind: 'log',
      send: (message) => {
        sent.push(message.text);
        return Promise.resolve();
      },
      close: () => undefined,
    },
  });
  await auth.requestLink(email);
  for (let waited = 0; !sent.length && waited < 5000; waited += 50)
    await new Promise((resolve) => setTimeout(resolve, 50));
  const token = new URL(/https?:\/\/\S+/.exec(sent[0])![0]).searchParams.get('token')!;
  const verified = await rest('POST', `${platform.urls.surveysRest}/api/auth/magic/verify`, { token });
  expect(verified.status).toBe(200);
  return { token: verified.body.token as string };
}
