import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loadConfig } from '#lib/config.js';
import { createMailer } from '#lib/subgraph/mail.js';
import { createStorage } from '#lib/storage/create-storage.js';
import { stagingKeyOf } from '#lib/storage/uploads.js';
import { sweepAssetUploads } from '#subgraphs/surveys/assets/asset.service.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { freePort } from '#test/support/ports.js';
import { linkIn, MailCatcher } from './support.js';

const ALLOWED_DOMAIN = 'field.example';
const ADMIN = 'boss@hq.example';
const FROM = 'surveys@venues.example';
const LINK_BASE = 'https://app.example/auth/magic?src=mail';
const LINK_PREFIX = 'https://app.example/auth/magic?';
const ASSET_MAX_BYTES = 200_000;

// A 1x1 PNG and a minimal PDF: real signatures, so the commit's type check has something to read.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('venue survey service', () => {
  let platform: TestPlatform;
  let base: string;
  let gateway: string;
  const mail = new MailCatcher();
  /** Every sign-in request this suite sent from this client; the per-client limit counts them all. */
  let signInRequests = 0;
  let counting = false;
  const statements: string[] = [];

  /** Sessions by name, made through the real mailed link. */
  const tokens: Record<string, string> = {};

  const requestLink = async (email: string) => {
    signInRequests += 1;
    return rest('POST', `${base}/api/auth/magic/request`, { email });
  };

  /** Asks for a link, receives the mail on the local SMTP server and returns the link's token. */
  const mailedToken = async (email: string, nth: number) => {
    const answer = await requestLink(email);
    expect(answer.status).toBe(202);
    // Addresses are compared case-insensitively; the mail goes to the normalized one.
    const received = await mail.waitFor(email.toLowerCase(), nth);
    const url = linkIn(received, LINK_PREFIX);
    expect(url).toBeDefined();
    return { url: url!, token: url!.searchParams.get('token')!, received };
  };

  const signIn = async (email: string) => {
    const count = mail.mails.filter((m) => m.to.includes(email)).length;
    const { token } = await mailedToken(email, count + 1);
    const verified = await rest('POST', `${base}/api/auth/magic/verify`, { token });
    expect(verified.status).toBe(200);
    return verified.body.token as string;
  };

  const as = (name: string) => ({ authorization: `Bearer ${tokens[name]}` });

  const createSurvey = async (who: string, body: Record<string, unknown>) => {
    const created = await rest('POST', `${base}/api/surveys`, body, as(who));
    expect(created.status).toBe(201);
    return created.body;
  };

  const complete = {
    address: '1 Harbour Road',
    contactName: 'Mia Manager',
    contactPhone: '+44 20 7946 0001',
    capacity: 120,
  };

  const db = () => platform.subgraphs.surveys.orm.em.fork().getConnection();

  beforeAll(async () => {
    await mail.start();
    const restPort = await freePort();
    platform = await startTestPlatform(
      {
        SURVEYS_REST_PORT: String(restPort),
        SMTP_URL: `smtp://127.0.0.1:${mail.port}`,
        ALLOWED_EMAIL_DOMAINS: ALLOWED_DOMAIN,
        ADMIN_EMAILS: ADMIN,
        MAGIC_FROM_EMAIL: FROM,
        MAGIC_LINK_BASE_URL: LINK_BASE,
        ASSET_MAX_BYTES: String(ASSET_MAX_BYTES),
      },
      {
        onQuery: (service, sql) => {
          if (counting && service === 'surveys') statements.push(sql);
        },
      },
    );
    base = platform.urls.surveysRest;
    gateway = platform.urls.gateway;
  });

  afterAll(async () => {
    await platform?.stop();
    await mail.stop();
  });

  it('answers /health and lists its endpoints at /api', async () => {
    const health = await rest('GET', `${base}/health`);
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('ok');
    const api = await rest('GET', `${base}/api`);
    const paths = api.body.endpoints.map((e: { method: string; path: string }) => `${e.method} ${e.path}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        'POST /api/surveys',
        'GET /api/surveys',
        'GET /api/surveys/{id}',
        'PUT /api/surveys/{id}',
        'POST /api/surveys/{id}/submit',
        'POST /api/surveys/{id}/assets/presign',
        'POST /api/surveys/{id}/assets/commit',
        'GET /api/surveys/{id}/export',
        'GET /api/assets/{assetId}',
        'POST /api/auth/magic/request',
        'POST /api/auth/magic/verify',
        'GET /api/auth/session',
        'POST /api/auth/logout',
      ]),
    );
  });

  it('answers 401 problems on every survey route without a session', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/api/surveys'],
      ['POST', '/api/surveys', { venueName: 'X' }],
      ['GET', `/api/surveys/${id}`],
      ['PUT', `/api/surveys/${id}`, { venueName: 'X' }],
      ['POST', `/api/surveys/${id}/submit`],
      ['POST', `/api/surveys/${id}/assets/presign`, { filename: 'a.png', contentType: 'image/png', size: 10 }],
      ['POST', `/api/surveys/${id}/assets/commit`, { assetId: id }],
      ['GET', `/api/surveys/${id}/export?format=html`],
      ['GET', `/api/assets/${id}`],
      ['GET', '/api/auth/session'],
    ];
    for (const [method, path, body] of calls) {
      const res = await rest(method, `${base}${path}`, body);
      expect([method, path, res.status]).toEqual([method, path, 401]);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body.status).toBe(401);
    }
    // A JWT or a made-up token is no session either.
    const jwt = await platform.token('someone');
    expect((await rest('GET', `${base}/api/surveys`, undefined, { authorization: `Bearer ${jwt}` })).status).toBe(401);
    expect(
      (await rest('GET', `${base}/api/surveys`, undefined, { authorization: 'Bearer not-a-session-token-at-all-0123' }))
        .status,
    ).toBe(401);
  });

  it('signs in by the mailed link: the token is single use and stored hashed; cookie and bearer both work', async () => {
    const email = `alice@${ALLOWED_DOMAIN}`;
    const { url, token, received } = await mailedToken('Alice@Field.Example', 1);
    expect(received.from).toBe(FROM);
    expect(received.decoded).toMatch(/^Subject: .*sign-in/im);
    expect(`${url.origin}${url.pathname}`).toBe('https://app.example/auth/magic');
    expect(url.searchParams.get('src')).toBe('mail');
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);

    const rows = await db().execute('select email, token_hash from surveys.magic_link where email = ?', [email]);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toBe(sha256(Buffer.from(token)));
    expect(JSON.stringify(rows)).not.toContain(token);

    const verified = await rest('POST', `${base}/api/auth/magic/verify`, { token });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ user: { email, isAdmin: false } });
    expect(typeof verified.body.token).toBe('string');
    expect(new Date(verified.body.expiresAt).getTime()).toBeGreaterThan(Date.now());
    const cookie = verified.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^survey_session=[\w-]+;/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    tokens.alice = verified.body.token;
    const sessions = await db().execute('select token_hash from surveys.user_session where email = ?', [email]);
    expect(sessions.map((row) => row.token_hash)).toContain(sha256(Buffer.from(tokens.alice)));

    const replay = await rest('POST', `${base}/api/auth/magic/verify`, { token });
    expect(replay.status).toBe(401);
    expect((await rest('POST', `${base}/api/auth/magic/verify`, { token: 'x'.repeat(43) })).status).toBe(401);

    const byBearer = await rest('GET', `${base}/api/auth/session`, undefined, as('alice'));
    expect(byBearer.status).toBe(200);
    expect(byBearer.body).toEqual({ user: { email, isAdmin: false }, expiresAt: verified.body.expiresAt });
    const byCookie = await rest('GET', `${base}/api/auth/session`, undefined, { cookie: cookie.split(';')[0] });
    expect(byCookie.status).toBe(200);
    expect(byCookie.body.user.email).toBe(email);

    // The gateway forwards the cookie, and a session works on GraphQL as on REST.
    const viaGateway = await graphql<{ surveySession: { user: { email: string } } }>(
      gateway,
      '{ surveySession { user { email isAdmin } } }',
      {},
      {
        cookie: cookie.split(';')[0],
      },
    );
    expect(viaGateway.body.data?.surveySession.user.email).toBe(email);

    tokens.bob = await signIn(`bob@${ALLOWED_DOMAIN}`);
    tokens.admin = await signIn(ADMIN);
    const admin = await rest('GET', `${base}/api/auth/session`, undefined, as('admin'));
    expect(admin.body.user).toEqual({ email: ADMIN, isAdmin: true });
  });

  it('answers every address the same and mails only allowed ones', async () => {
    const outsider = await requestLink('mallory@elsewhere.example');
    const insider = await requestLink(`carol@${ALLOWED_DOMAIN}`);
    expect(outsider.status).toBe(202);
    expect(insider.status).toBe(outsider.status);
    expect(insider.body).toEqual(outsider.body);
    await mail.waitFor(`carol@${ALLOWED_DOMAIN}`, 1);
    // Mails go out in order; carol's arrived, so mallory's would have too.
    expect(mail.mails.some((m) => m.to.includes('mallory@elsewhere.example'))).toBe(false);

    // Refused before any link is asked for, so the limit per client does not count it.
    signInRequests -= 1;
    const bad = await requestLink('not-an-address');
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toContain('email');
  });

  it('keeps the older link valid when a new one is requested, ends the others at sign-in, and refuses expired links', async () => {
    const email = `carol@${ALLOWED_DOMAIN}`;
    const olderToken = linkIn(await mail.waitFor(email, 1), LINK_PREFIX)!.searchParams.get('token');
    const { token: newerToken } = await mailedToken(email, 2);
    expect((await rest('POST', `${base}/api/auth/magic/verify`, { token: olderToken })).status).toBe(200);
    expect((await rest('POST', `${base}/api/auth/magic/verify`, { token: newerToken })).status).toBe(401);

    const { token: newer } = await mailedToken(email, 3);
    await db().execute(`update surveys.magic_link set expires_at = now() - interval '1 minute' where token_hash = ?`, [
      sha256(Buffer.from(newer)),
    ]);
    expect((await rest('POST', `${base}/api/auth/magic/verify`, { token: newer })).status).toBe(401);
  });

  let draftId: string;

  it('creates, reads and updates a draft; bad input is a 400 naming the field and writes nothing', async () => {
    const missing = await rest('POST', `${base}/api/surveys`, { address: 'Somewhere' }, as('alice'));
    expect(missing.status).toBe(400);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
    expect(missing.body.errors.map((e: { field: string }) => e.field)).toContain('venueName');

    const badCapacity = await rest('POST', `${base}/api/surveys`, { venueName: 'Hall', capacity: 'many' }, as('alice'));
    expect(badCapacity.status).toBe(400);
    expect(badCapacity.body.errors.map((e: { field: string }) => e.field)).toContain('capacity');
    const negative = await rest('POST', `${base}/api/surveys`, { venueName: 'Hall', capacity: -5 }, as('alice'));
    expect(negative.status).toBe(400);
    expect(negative.body.errors.map((e: { field: string }) => e.field)).toContain('capacity');
    const badContact = await rest('POST', `${base}/api/surveys`, { venueName: 'Hall', contactId: 'nope' }, as('alice'));
    expect(badContact.status).toBe(400);
    expect(badContact.body.errors.map((e: { field: string }) => e.field)).toContain('contactId');
    const unknown = await rest('POST', `${base}/api/surveys`, { venueName: 'Hall', colour: 'red' }, as('alice'));
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).not.toMatch(/select|insert|\bat .*\.ts/i);
    const [{ count }] = await db().execute('select count(*)::int as count from surveys.survey');
    expect(count).toBe(0);

    const created = await createSurvey('alice', {
      venueName: '  The Grand Hall ',
      amenities: ['stage', 'parking', 'stage'],
    });
    expect(created).toMatchObject({
      venueName: 'The Grand Hall',
      address: null,
      contactName: null,
      contactPhone: null,
      capacity: null,
      amenities: ['stage', 'parking'],
      notes: null,
      contactId: null,
      status: 'draft',
      submittedAt: null,
      assets: [],
    });
    draftId = created.id;

    const read = await rest('GET', `${base}/api/surveys/${draftId}`, undefined, as('alice'));
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(draftId);
    // What create answered is what was stored, to the millisecond.
    expect(read.body).toEqual(created);

    const updated = await rest(
      'PUT',
      `${base}/api/surveys/${draftId}`,
      { capacity: 80, notes: 'Lift at the back' },
      as('alice'),
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ venueName: 'The Grand Hall', capacity: 80, notes: 'Lift at the back' });
    const cleared = await rest('PUT', `${base}/api/surveys/${draftId}`, { venueName: null }, as('alice'));
    expect(cleared.status).toBe(400);
    expect(cleared.body.errors.map((e: { field: string }) => e.field)).toContain('venueName');

    expect(
      (await rest('GET', `${base}/api/surveys/00000000-0000-4000-8000-000000000000`, undefined, as('alice'))).status,
    ).toBe(404);
    expect((await rest('GET', `${base}/api/surveys/not-a-uuid`, undefined, as('alice'))).status).toBe(404);
    expect((await rest('PUT', `${base}/api/surveys/not-a-uuid`, { notes: 'x' }, as('alice'))).status).toBe(404);
  });

  it('keeps surveys to their owner, shows admins all, and pages and filters by status', async () => {
    const bobs = await createSurvey('bob', { venueName: 'Bob’s Bistro' });
    for (const [method, path, body] of [
      ['GET', `/api/surveys/${bobs.id}`],
      ['PUT', `/api/surveys/${bobs.id}`, { notes: 'mine now' }],
      ['POST', `/api/surveys/${bobs.id}/submit`],
      ['GET', `/api/surveys/${bobs.id}/export?format=markdown`],
      [
        'POST',
        `/api/surveys/${bobs.id}/assets/presign`,
        { filename: 'a.png', contentType: 'image/png', size: PNG.length },
      ],
    ] as Array<[string, string, unknown?]>) {
      expect([path, (await rest(method, `${base}${path}`, body, as('alice'))).status]).toEqual([path, 404]);
    }
    const alices = await rest('GET', `${base}/api/surveys`, undefined, as('alice'));
    expect(alices.status).toBe(200);
    expect(alices.body).toMatchObject({ page: 1, limit: 20, total: 1 });
    expect(alices.body.data.map((s: { id: string }) => s.id)).toEqual([draftId]);

    const all = await rest('GET', `${base}/api/surveys?limit=1&page=2`, undefined, as('admin'));
    expect(all.body).toMatchObject({ page: 2, limit: 1, total: 2 });
    expect(all.body.data).toHaveLength(1);
    expect((await rest('GET', `${base}/api/surveys/${bobs.id}`, undefined, as('admin'))).status).toBe(200);
    // Admins review; only the surveyor changes a survey.
    const adminEdit = await rest('PUT', `${base}/api/surveys/${bobs.id}`, { notes: 'admin was here' }, as('admin'));
    expect(adminEdit.status).toBe(403);
    expect((await rest('POST', `${base}/api/surveys/${bobs.id}/submit`, undefined, as('admin'))).status).toBe(403);
    expect((await rest('GET', `${base}/api/surveys/${bobs.id}`, undefined, as('bob'))).body.notes).toBeNull();

    const connection = await graphql<{
      surveys: { totalCount: number; nodes: Array<{ id: string }>; pageInfo: { hasNextPage: boolean } };
    }>(gateway, '{ surveys(first: 1) { totalCount nodes { id } pageInfo { hasNextPage } } }', {}, as('admin'));
    expect(connection.body.data?.surveys).toMatchObject({ totalCount: 2, pageInfo: { hasNextPage: true } });
    expect(connection.body.data?.surveys.nodes).toHaveLength(1);

    expect((await rest('GET', `${base}/api/surveys?status=submitted`, undefined, as('admin'))).body.total).toBe(0);
    expect((await rest('GET', `${base}/api/surveys?status=draft`, undefined, as('admin'))).body.total).toBe(2);
    const badStatus = await rest('GET', `${base}/api/surveys?status=archived`, undefined, as('admin'));
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.errors.map((e: { field: string }) => e.field)).toContain('status');
    expect((await rest('GET', `${base}/api/surveys?limit=500`, undefined, as('admin'))).status).toBe(400);
  });

  it('uploads an asset in two steps and checks what arrived', async () => {
    const presign = (body: unknown, who = 'alice', id = draftId) =>
      rest('POST', `${base}/api/surveys/${id}/assets/presign`, body, as(who));
    const commit = (body: unknown, who = 'alice', id = draftId) =>
      rest('POST', `${base}/api/surveys/${id}/assets/commit`, body, as(who));

    const badType = await presign({ filename: 'run.exe', contentType: 'application/x-msdownload', size: 10 });
    expect(badType.status).toBe(400);
    expect(badType.body.errors[0].field).toBe('contentType');
    expect(badType.body.detail).toContain('application/pdf');
    const tooBig = await presign({ filename: 'huge.png', contentType: 'image/png', size: ASSET_MAX_BYTES + 1 });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.errors[0].field).toBe('size');
    const noName = await presign({ contentType: 'image/png', size: 10 });
    expect(noName.status).toBe(400);
    expect(noName.body.errors.map((e: { field: string }) => e.field)).toContain('filename');

    const jpg = await presign({ filename: 'phone.jpg', contentType: 'image/JPG', size: 1000 });
    expect(jpg.status).toBe(200);
    expect(jpg.body.headers['content-type']).toBe('image/jpeg');

    const photo = await presign({ filename: 'front door.png', contentType: 'image/png', size: PNG.length });
    expect(photo.status).toBe(200);
    expect(photo.body).toMatchObject({ method: 'PUT', headers: { 'content-type': 'image/png' } });
    expect(photo.body.id).toBe(photo.body.assetId);
    expect(photo.body.uploadUrl.startsWith(`${base}/storage/`)).toBe(true);
    expect(new Date(photo.body.expiresAt).getTime()).toBeGreaterThan(Date.now());
    const assetId = photo.body.assetId as string;

    // Commit before the bytes arrived: the asset is still waiting for them.
    const early = await commit({ assetId });
    expect(early.status).toBe(409);
    expect(early.body.state).toBe('awaiting-upload');

    const wrongHeader = await fetch(photo.body.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'image/jpeg' },
      body: PNG,
    });
    expect(wrongHeader.status).toBe(400);
    const put = await fetch(photo.body.uploadUrl, { method: 'PUT', headers: photo.body.headers, body: PNG });
    expect(put.status).toBe(200);

    const wrongSha = await commit({ assetId, sha256: sha256(Buffer.from('something else')) });
    expect(wrongSha.status).toBe(400);
    expect(wrongSha.body.errors[0].field).toBe('sha256');
    // The rejected bytes are gone, so the same URL takes them again.
    expect((await fetch(photo.body.uploadUrl, { method: 'PUT', headers: photo.body.headers, body: PNG })).status).toBe(
      200,
    );
    const committed = await commit({ assetId, sha256: sha256(PNG) });
    expect(committed.status).toBe(200);
    expect(committed.body).toMatchObject({
      id: assetId,
      assetId,
      status: 'committed',
      size: PNG.length,
      sha256: sha256(PNG),
      filename: 'front door.png',
    });

    const twice = await commit({ assetId });
    expect(twice.status).toBe(409);
    expect(twice.body.state).toBe('committed');
    // Replaying the upload URL cannot overwrite committed bytes.
    expect((await fetch(photo.body.uploadUrl, { method: 'PUT', headers: photo.body.headers, body: PNG })).status).toBe(
      409,
    );

    const meta = await rest('GET', `${base}/api/assets/${assetId}`, undefined, as('alice'));
    expect(meta.status).toBe(200);
    expect(meta.body).toMatchObject({
      id: assetId,
      surveyId: draftId,
      contentType: 'image/png',
      size: PNG.length,
      status: 'committed',
    });
    const download = await fetch(meta.body.downloadUrl);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await download.arrayBuffer()).equals(PNG)).toBe(true);
    expect(new Date(meta.body.downloadUrlExpiresAt).getTime() - Date.now()).toBeLessThanOrEqual(10 * 60 * 1000);
    expect((await rest('GET', `${base}/api/assets/${assetId}`, undefined, as('bob'))).status).toBe(404);
    expect((await rest('GET', `${base}/api/assets/nope`, undefined, as('alice'))).status).toBe(404);

    const survey = await rest('GET', `${base}/api/surveys/${draftId}`, undefined, as('alice'));
    expect(survey.body.assets.map((a: { id: string }) => a.id)).toEqual([assetId]);

    // Declared a PNG, uploaded a PDF under the PNG header: the first bytes give it away.
    const fake = await presign({ filename: 'fake.png', contentType: 'image/png', size: PDF.length });
    expect((await fetch(fake.body.uploadUrl, { method: 'PUT', headers: fake.body.headers, body: PDF })).status).toBe(
      200,
    );
    const fakeCommit = await commit({ assetId: fake.body.assetId });
    expect(fakeCommit.status).toBe(400);
    expect(fakeCommit.body.errors[0].field).toBe('contentType');

    // Bytes of another size than declared (as a direct S3 upload could leave them in the staging key) are refused.
    const doc = await presign({ filename: 'floor plan.pdf', contentType: 'application/pdf', size: PDF.length + 5 });
    await createStorage(platform.config).put(
      stagingKeyOf(`surveys/${draftId}/${doc.body.assetId}`),
      Readable.from([PDF]),
      {
        contentType: 'application/pdf',
        maxBytes: 1_000_000,
      },
    );
    const sizeCommit = await commit({ assetId: doc.body.assetId });
    expect(sizeCommit.status).toBe(400);
    expect(sizeCommit.body.errors[0].field).toBe('size');

    // An asset of another survey cannot be committed here.
    const bobsSurvey = await createSurvey('bob', { venueName: 'Bob’s Barn' });
    const bobsAsset = await presign(
      { filename: 'barn.png', contentType: 'image/png', size: PNG.length },
      'bob',
      bobsSurvey.id,
    );
    await fetch(bobsAsset.body.uploadUrl, { method: 'PUT', headers: bobsAsset.body.headers, body: PNG });
    expect((await commit({ assetId: bobsAsset.body.assetId })).status).toBe(404);
    expect((await commit({ assetId: 'nope' })).status).toBe(400);

    // Forged and expired upload URLs are refused.
    const forged = photo.body.uploadUrl.replace(/.$/, (c: string) => (c === 'A' ? 'B' : 'A'));
    expect((await fetch(forged, { method: 'PUT', headers: photo.body.headers, body: PNG })).status).toBe(403);
    const expired = await createStorage(platform.config).presignPut(`surveys/${draftId}/expired`, {
      contentType: 'image/png',
      size: PNG.length,
      expiresInSeconds: -1,
      baseUrl: base,
    });
    const expiredPut = await fetch(expired.url, { method: 'PUT', headers: expired.headers, body: PNG });
    expect(expiredPut.status).toBe(403);
    expect(((await expiredPut.json()) as { detail: string }).detail).toMatch(/expired/);

    const events = await db().execute(`select kind from surveys.survey_event where survey_id = ? order by created_at`, [
      draftId,
    ]);
    expect(events.map((e) => e.kind)).toEqual(['created', 'updated', 'asset_committed']);
  });

  it('keeps committed bytes whatever is sent to the upload URL afterwards', async () => {
    const presigned = await rest(
      'POST',
      `${base}/api/surveys/${draftId}/assets/presign`,
      { filename: 'sign.png', contentType: 'image/png', size: PNG.length },
      as('alice'),
    );
    expect(
      (await fetch(presigned.body.uploadUrl, { method: 'PUT', headers: presigned.body.headers, body: PNG })).status,
    ).toBe(200);
    const committed = await rest(
      'POST',
      `${base}/api/surveys/${draftId}/assets/commit`,
      { assetId: presigned.body.assetId },
      as('alice'),
    );
    expect(committed.status).toBe(200);
    // Same size, another picture: the URL is closed (the bytes were moved into place), and the stored ones stay.
    const other = Buffer.from(PNG);
    other[other.length - 5] ^= 0xff;
    const late = await fetch(presigned.body.uploadUrl, { method: 'PUT', headers: presigned.body.headers, body: other });
    expect(late.status).toBe(409);
    const meta = await rest('GET', `${base}/api/assets/${presigned.body.assetId}`, undefined, as('alice'));
    expect(Buffer.from(await (await fetch(meta.body.downloadUrl)).arrayBuffer()).equals(PNG)).toBe(true);
    expect(
      await createStorage(platform.config).size(stagingKeyOf(`surveys/${draftId}/${presigned.body.assetId}`)),
    ).toBeNull();
  });

  it('sweeps assets presigned and never committed once their URL expired, rows and bytes, and keeps committed ones', async () => {
    const storage = createStorage(platform.config);
    const presign = async () =>
      (
        await rest(
          'POST',
          `${base}/api/surveys/${draftId}/assets/presign`,
          { filename: 'p.png', contentType: 'image/png', size: PNG.length },
          as('alice'),
        )
      ).body;
    const never = await presign();
    const staged = await presign();
    expect((await fetch(staged.uploadUrl, { method: 'PUT', headers: staged.headers, body: PNG })).status).toBe(200);
    const kept = await presign();
    await fetch(kept.uploadUrl, { method: 'PUT', headers: kept.headers, body: PNG });
    expect(
      (await rest('POST', `${base}/api/surveys/${draftId}/assets/commit`, { assetId: kept.assetId }, as('alice')))
        .status,
    ).toBe(200);
    const keyOf = (id: string) => `surveys/${draftId}/${id}`;
    const rows = async () =>
      (
        await db().execute(`select id from surveys.survey_asset where id in (?, ?, ?)`, [
          never.assetId,
          staged.assetId,
          kept.assetId,
        ])
      )
        .map((r) => r.id as string)
        .sort();

    // While the URLs last (and a little after), nothing goes.
    const { orm } = platform.subgraphs.surveys;
    expect(await sweepAssetUploads(orm.em.fork(), storage, new Date())).toBe(0);
    expect(await rows()).toHaveLength(3);

    const later = new Date(Date.now() + 60 * 60 * 1000);
    expect(await sweepAssetUploads(orm.em.fork(), storage, later)).toBeGreaterThanOrEqual(2);
    expect(await rows()).toEqual([kept.assetId]);
    expect(await storage.size(stagingKeyOf(keyOf(staged.assetId)))).toBeNull();
    expect(await storage.size(keyOf(kept.assetId))).toBe(PNG.length);
    // A commit of a swept reservation finds nothing.
    expect(
      (await rest('POST', `${base}/api/surveys/${draftId}/assets/commit`, { assetId: staged.assetId }, as('alice')))
        .status,
    ).toBe(404);
  });

  it('exports html, markdown and whatsapp with user text escaped for each', async () => {
    const put = await rest(
      'PUT',
      `${base}/api/surveys/${draftId}`,
      {
        venueName: 'The <script>alert(1)</script> *Grand* _Hall_ ~x~',
        notes: '> quoted\n- not a list\nBring `cash` & [links](javascript:alert(1))',
        amenities: ['stage', '*free* wifi'],
      },
      as('alice'),
    );
    expect(put.status).toBe(200);

    const html = await fetch(`${base}/api/surveys/${draftId}/export?format=html`, { headers: as('alice') });
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await html.text();
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).not.toContain('<script>');
    expect(page).toContain('The &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toMatch(/<img src="http:\/\/localhost:\d+\/storage\/[^"]+" alt="front door.png">/);

    const md = await fetch(`${base}/api/surveys/${draftId}/export?format=markdown`, { headers: as('alice') });
    expect(md.status).toBe(200);
    expect(md.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    const markdown = await md.text();
    expect(markdown).toContain(
      '# Venue survey: The \\<script\\>alert\\(1\\)\\</script\\> \\*Grand\\* \\_Hall\\_ \\~x\\~',
    );
    expect(markdown).toContain('\\> quoted');
    expect(markdown).toContain('\\- not a list');
    expect(markdown).toContain('\\[links\\]\\(javascript:alert\\(1\\)\\)');
    expect(markdown).toMatch(/!\[front door.png\]\(http:\/\/localhost:\d+\/storage\/\S+\)/);

    const wa = await fetch(`${base}/api/surveys/${draftId}/export?format=whatsapp`, { headers: as('alice') });
    expect(wa.status).toBe(200);
    expect(wa.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const message = await wa.text();
    const [title] = message.split('\n');
    expect(title).toBe('*Venue survey: The <script>alert(1)</script> ∗Grand∗ ＿Hall＿ ∼x∼*');
    expect(message).toContain('*Address:* —');
    expect(message).toContain('- ∗free∗ wifi');
    expect(message).toContain('› quoted');
    expect(message).toContain('– not a list');
    expect(message).toContain('ˋcashˋ');
    // WhatsApp renders neither headings nor double markers; links stay plain text there.
    expect(message).not.toMatch(/^#|\*\*/m);
    expect(message).toMatch(/- front door.png: http:\/\/localhost:\d+\/storage\//);

    for (const query of ['', '?format=pdf', '?format=']) {
      const bad = await rest('GET', `${base}/api/surveys/${draftId}/export${query}`, undefined, as('alice'));
      expect([query, bad.status]).toEqual([query, 400]);
      expect(bad.body.detail).toContain('html, markdown, whatsapp');
      expect(bad.body.errors[0].field).toBe('format');
    }
    expect(
      (
        await rest(
          'GET',
          `${base}/api/surveys/00000000-0000-4000-8000-000000000000/export?format=html`,
          undefined,
          as('alice'),
        )
      ).status,
    ).toBe(404);
  });

  it('submits only a complete draft, stamps the time and freezes it', async () => {
    const incomplete = await rest(
      'PUT',
      `${base}/api/surveys/${draftId}`,
      { venueName: 'The Grand Hall', capacity: null },
      as('alice'),
    );
    expect(incomplete.status).toBe(200);
    const early = await rest('POST', `${base}/api/surveys/${draftId}/submit`, undefined, as('alice'));
    expect(early.status).toBe(400);
    expect(early.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'address',
      'capacity',
      'contactName',
      'contactPhone',
    ]);
    expect((await rest('GET', `${base}/api/surveys/${draftId}`, undefined, as('alice'))).body.status).toBe('draft');

    expect((await rest('PUT', `${base}/api/surveys/${draftId}`, complete, as('alice'))).status).toBe(200);
    const before = Date.now();
    const submitted = await rest('POST', `${base}/api/surveys/${draftId}/submit`, undefined, as('alice'));
    expect(submitted.status).toBe(200);
    expect(submitted.body.status).toBe('submitted');
    expect(new Date(submitted.body.submittedAt).getTime()).toBeGreaterThanOrEqual(before - 1000);

    const again = await rest('POST', `${base}/api/surveys/${draftId}/submit`, undefined, as('alice'));
    expect(again.status).toBe(409);
    expect(again.body.state).toBe('submitted');
    expect(again.body.detail).toContain('submitted');
    const change = await rest('PUT', `${base}/api/surveys/${draftId}`, { notes: 'too late' }, as('alice'));
    expect(change.status).toBe(409);
    expect(change.body.state).toBe('submitted');
    const upload = await rest(
      'POST',
      `${base}/api/surveys/${draftId}/assets/presign`,
      { filename: 'a.png', contentType: 'image/png', size: 10 },
      as('alice'),
    );
    expect(upload.status).toBe(409);

    const filtered = await rest('GET', `${base}/api/surveys?status=submitted`, undefined, as('alice'));
    expect(filtered.body.data.map((s: { id: string }) => s.id)).toEqual([draftId]);
    const events = await db().execute(
      `select kind, actor_email from surveys.survey_event where survey_id = ? and kind = 'submitted'`,
      [draftId],
    );
    expect(events).toEqual([{ kind: 'submitted', actor_email: `alice@${ALLOWED_DOMAIN}` }]);
  });

  it('resolves Survey.contact and Contact.surveys across subgraphs through the gateway', async () => {
    const contact = await rest('POST', `${platform.urls.contactsRest}/api/contacts`, {
      firstName: 'Vera',
      lastName: 'Venue',
      email: 'vera@venues.example',
    });
    expect(contact.status).toBe(201);
    const contactId = contact.body.id as string;
    const mine = await createSurvey('alice', { venueName: 'Vera’s Hotel', contactId });
    await createSurvey('bob', { venueName: 'Vera’s Annex', contactId });

    const survey = await graphql<{
      survey: { venueName: string; contact: { id: string; firstName: string; lastName: string } };
    }>(
      gateway,
      'query ($id: ID!) { survey(id: $id) { venueName contact { id firstName lastName } } }',
      { id: mine.id },
      as('alice'),
    );
    expect(survey.body.errors).toBeUndefined();
    expect(survey.body.data?.survey).toEqual({
      venueName: 'Vera’s Hotel',
      contact: { id: contactId, firstName: 'Vera', lastName: 'Venue' },
    });

    const query = 'query ($id: ID!) { contact(id: $id) { firstName surveys { venueName ownerEmail } } }';
    const own = await graphql<{ contact: { firstName: string; surveys: Array<{ venueName: string }> } }>(
      gateway,
      query,
      { id: contactId },
      as('alice'),
    );
    expect(own.body.errors).toBeUndefined();
    expect(own.body.data?.contact.firstName).toBe('Vera');
    expect(own.body.data?.contact.surveys.map((s) => s.venueName)).toEqual(['Vera’s Hotel']);
    const admin = await graphql<{ contact: { surveys: Array<{ venueName: string }> } }>(
      gateway,
      query,
      { id: contactId },
      as('admin'),
    );
    expect(admin.body.data?.contact.surveys.map((s) => s.venueName).sort()).toEqual(['Vera’s Annex', 'Vera’s Hotel']);
    const anonymous = await graphql(gateway, query, { id: contactId });
    expect(anonymous.body.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('lists surveys with a fixed number of SQL statements, however many there are', async () => {
    const countFor = async () => {
      statements.length = 0;
      counting = true;
      const list = await rest('GET', `${base}/api/surveys?limit=100`, undefined, as('admin'));
      counting = false;
      expect(list.status).toBe(200);
      return { count: statements.length, surveys: list.body.data.length as number };
    };
    const small = await countFor();
    for (let i = 0; i < 6; i += 1) await createSurvey('bob', { venueName: `Extra venue ${i}` });
    const large = await countFor();
    expect(large.surveys).toBe(small.surveys + 6);
    // session lookup, page, total, and one batch of assets for every survey on the page
    expect(small.count).toBe(4);
    expect(large.count).toBe(4);
  });

  it('pages the surveys connection by keyset cursors: a survey created meanwhile neither repeats nor skips one', async () => {
    for (const index of [1, 2, 3, 4]) await createSurvey('bob', { venueName: `Keyset ${index}` });
    type Page = {
      nodes: Array<{ id: string }>;
      pageInfo: { hasNextPage: boolean; startCursor: string; endCursor: string };
    };
    const read = async (args: Record<string, unknown>) => {
      const answer = await graphql<{ surveys: Page }>(
        gateway,
        'query ($first: Int, $after: String, $last: Int, $before: String) { surveys(first: $first, after: ' +
          '$after, last: $last, before: $before) { nodes { id } pageInfo { hasNextPage startCursor endCursor } } }',
        args,
        as('admin'),
      );
      expect(answer.body.errors).toBeUndefined();
      return {
        ids: answer.body.data!.surveys.nodes.map((node) => node.id),
        pageInfo: answer.body.data!.surveys.pageInfo,
      };
    };
    const before = (await read({ first: 100 })).ids;
    const first = await read({ first: 2 });
    expect(first.ids).toEqual(before.slice(0, 2));
    await createSurvey('bob', { venueName: 'Keyset newest' });
    const rest = await read({ first: 100, after: first.pageInfo.endCursor });
    expect([...first.ids, ...rest.ids]).toEqual(before);
    const back = await read({ last: 2, before: rest.pageInfo.startCursor });
    expect(back.ids).toEqual(first.ids);
    expect(back.pageInfo.hasNextPage).toBe(true);
  });

  it('logs out: the session ends and the cookie is cleared', async () => {
    const cookieToken = tokens.bob;
    const out = await rest('POST', `${base}/api/auth/logout`, undefined, { cookie: `survey_session=${cookieToken}` });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^survey_session=;.*Expires=Thu, 01 Jan 1970/);
    expect((await rest('GET', `${base}/api/auth/session`, undefined, as('bob'))).status).toBe(401);
    expect((await rest('POST', `${base}/api/auth/logout`, undefined, as('bob'))).status).toBe(401);
    expect((await rest('GET', `${base}/api/auth/session`, undefined, as('alice'))).status).toBe(200);
  });

  it('limits sign-in requests per address and per client, with Retry-After', async () => {
    const email = `dave@${ALLOWED_DOMAIN}`;
    for (let i = 0; i < 5; i += 1) expect((await requestLink(email)).status).toBe(202);
    const limited = await requestLink(email);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('content-type')).toContain('application/problem+json');
    // Another address from the same client is still served until the client's own limit.
    expect(signInRequests).toBeLessThan(30);
    while (signInRequests < 30) expect((await requestLink(`user${signInRequests}@${ALLOWED_DOMAIN}`)).status).toBe(202);
    const client = await requestLink(`fresh@${ALLOWED_DOMAIN}`);
    expect(client.status).toBe(429);
    expect(Number(client.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('mailer without SMTP_URL', () => {
  it('writes the message, link included, to the log instead of sending it', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    });
    const mailer = createMailer(loadConfig({}), pino({ level: 'info' }, sink));
    expect(mailer.kind).toBe('log');
    await mailer.send({
      from: 'a@b.example',
      to: 'c@d.example',
      subject: 'Sign in',
      text: 'https://app.example/auth/magic?token=abc',
    });
    expect(lines.join('')).toContain('https://app.example/auth/magic?token=abc');
  });

  it('without SMTP_URL, shows the mail on lines of its own on a terminal, the link alone on its line', async () => {
    const written: string[] = [];
    const terminal = Object.assign(
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          written.push(chunk.toString());
          callback();
        },
      }),
      { isTTY: true },
    ) as unknown as NodeJS.WriteStream;
    const link = 'http://localhost:5173/auth/magic?token=abc-DEF_123';
    const message = { from: 'a@b.example', to: 'c@d.example', subject: 'Sign in', text: `Sign in:\n${link}\n` };
    await createMailer(loadConfig({}), pino({ level: 'silent' }), terminal).send(message);
    expect(written.join('').split('\n')).toContain(link);
    // Not on a terminal (a pipe, a test): the log line alone.
    const piped = Object.assign(new Writable({ write: (_c, _e, callback) => callback() }), { isTTY: false });
    const write = jest.spyOn(piped, 'write');
    await createMailer(loadConfig({}), pino({ level: 'silent' }), piped as unknown as NodeJS.WriteStream).send(message);
    expect(write).not.toHaveBeenCalled();
  });
});
