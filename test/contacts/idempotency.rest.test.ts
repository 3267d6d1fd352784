import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { freePort } from '#test/support/ports.js';

/** The contacts whose first name is `name` (a name of the test's own). */
async function contactsNamed(base: string, name: string): Promise<{ id: string }[]> {
  const found = await rest('GET', `${base}/api/contacts?search=${encodeURIComponent(name)}`);
  return found.body.data.filter((contact: { firstName: string }) => contact.firstName === name);
}

const create = (base: string, body: Record<string, unknown>, key?: string) =>
  rest('POST', `${base}/api/contacts`, body, key === undefined ? {} : { 'idempotency-key': key });

/** A multipart POST of one file in field `file` (and `fields` before it), as a client sends it. */
async function postFile(
  url: string,
  file: { bytes: string; name: string; type: string },
  options: { key?: string; headers?: Record<string, string>; fields?: Record<string, string> } = {},
) {
  const form = new FormData();
  for (const [name, value] of Object.entries(options.fields ?? {})) form.append(name, value);
  form.append('file', new Blob([file.bytes], { type: file.type }), file.name);
  const headers = { ...options.headers, ...(options.key === undefined ? {} : { 'idempotency-key': options.key }) };
  const response = await fetch(url, { method: 'POST', body: form, headers });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

/** Every object the file store holds under `prefix` (staged ones under `staging/<prefix>` included). */
async function storedObjects(platform: TestPlatform, prefix: string): Promise<string[]> {
  const root = fileURLToPath(platform.config.storageUrl);
  const listed = async (folder: string) =>
    (await readdir(`${root}/${folder}`, { recursive: true, withFileTypes: true }).catch(() => []))
      .filter((entry) => entry.isFile())
      .map((entry) => `${entry.parentPath.slice(root.length + 1)}/${entry.name}`);
  return [...(await listed(prefix)), ...(await listed(`staging/${prefix}`))];
}

describe.each([
  { label: 'PostgreSQL (or PGlite when TEST_DATABASE_URL is unset)', embedded: false, overHttp: false },
  { label: 'embedded PGlite', embedded: true, overHttp: false },
  // The gateway calls the subgraph over HTTP (a subgraph deployed apart): Apollo Server runs the mutation there.
  { label: 'a subgraph called over HTTP', embedded: false, overHttp: true },
])('Idempotency-Key on $label', ({ embedded, overHttp }) => {
  let platform: TestPlatform;
  let base: string;

  beforeAll(async () => {
    const port = await freePort();
    const overHttpEnv = {
      CONTACTS_SUBGRAPH_PORT: String(port),
      CONTACTS_SUBGRAPH_URL: `http://127.0.0.1:${port}/graphql`,
    };
    platform = await startTestPlatform(overHttp ? overHttpEnv : {}, { embedded });
    base = platform.urls.contactsRest;
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('answers the same key and body again with the first answer, and creates nothing more', async () => {
    const key = randomUUID();
    const name = `Once${key.slice(0, 8)}`;
    const first = await create(base, { firstName: name, company: 'Kept' }, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // The same body with its members in another order is the same request.
    const again = await create(base, { company: 'Kept', firstName: name }, key);
    expect({ status: again.status, body: again.body, location: again.headers.get('location') }).toEqual({
      status: 201,
      body: first.body,
      location: first.headers.get('location'),
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await contactsNamed(base, name)).toHaveLength(1);

    // Keys are the caller's own, and other keys (or none) create as before.
    expect((await create(base, { firstName: name }, randomUUID())).status).toBe(201);
    expect((await create(base, { firstName: name })).status).toBe(201);
    expect(await contactsNamed(base, name)).toHaveLength(3);
  });

  it('refuses the same key with another body (422 naming Idempotency-Key), doing nothing', async () => {
    const key = randomUUID();
    const name = `Reused${key.slice(0, 8)}`;
    expect((await create(base, { firstName: name }, key)).status).toBe(201);
    const other = await create(base, { firstName: `${name}x` }, key);
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toContain('application/problem+json');
    expect(other.body).toMatchObject({ status: 422, code: 'UNPROCESSABLE_CONTENT' });
    expect(other.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    expect(await contactsNamed(base, `${name}x`)).toHaveLength(0);
  });

  it('keeps no failed answer: the same key runs again once the request is right', async () => {
    const key = randomUUID();
    const refused = await create(base, { lastName: 'Nameless' }, key);
    expect(refused.status).toBe(400);
    const name = `Later${key.slice(0, 8)}`;
    // Another body under the key of a refused request is no reuse: nothing was kept for it.
    const created = await create(base, { firstName: name }, key);
    expect(created.status).toBe(201);
    expect(created.headers.get('idempotent-replayed')).toBeNull();
  });

  it('refuses a key that is not one (400 naming the header), and ignores keys where none is taken', async () => {
    const long = await create(base, { firstName: 'Long key' }, 'k'.repeat(256));
    expect(long.status).toBe(400);
    expect(long.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    const created = await create(base, { firstName: 'Updated twice' });
    const url = `${base}/api/contacts/${created.body.id}`;
    const key = randomUUID();
    const put = (company: string) => rest('PUT', url, { company }, { 'idempotency-key': key });
    expect((await put('One')).body.company).toBe('One');
    expect((await put('Two')).body.company).toBe('Two');
  });

  describe('on a multipart upload (the key goes with its commit, the file counted by its bytes)', () => {
    const note = { bytes: 'the minutes of the meeting\n', name: 'minutes.txt', type: 'text/plain' };

    async function attachmentsOf(contactId: string) {
      return (await rest('GET', `${base}/api/contacts/${contactId}/attachments`)).body.data as { id: string }[];
    }

    it('answers an attachment sent again with the first answer; one attachment, one stored object', async () => {
      const contact = await create(base, { firstName: 'Attached' });
      const url = `${base}/api/contacts/${contact.body.id}/attachments`;
      const key = randomUUID();
      const first = await postFile(url, note, { key });
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const again = await postFile(url, note, { key });
      expect({ status: again.status, body: again.body, location: again.headers.get('location') }).toEqual({
        status: 201,
        body: first.body,
        location: first.headers.get('location'),
      });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect((await attachmentsOf(contact.body.id)).map((attachment) => attachment.id)).toEqual([first.body.id]);
      // The retry's own reservation was cancelled: its staged bytes went with it.
      expect(await storedObjects(platform, `contacts/${contact.body.id}`)).toHaveLength(1);

      // Another file under the same key is another request: 422, nothing kept of it.
      const other = await postFile(url, { ...note, bytes: 'another text\n' }, { key });
      expect(other.status).toBe(422);
      expect(other.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
      // So is the same file under another name.
      const renamed = await postFile(url, { ...note, name: 'renamed.txt' }, { key });
      expect(renamed.status).toBe(422);
      // So is the same file sent to another contact.
      const elsewhere = await create(base, { firstName: 'Elsewhere' });
      const moved = await postFile(`${base}/api/contacts/${elsewhere.body.id}/attachments`, note, { key });
      expect(moved.status).toBe(422);
      expect(await attachmentsOf(contact.body.id)).toHaveLength(1);
      expect(await attachmentsOf(elsewhere.body.id)).toHaveLength(0);
      expect(await storedObjects(platform, `contacts/${contact.body.id}`)).toHaveLength(1);
      expect(await storedObjects(platform, `contacts/${elsewhere.body.id}`)).toHaveLength(0);
    });

    it('keeps no refused upload: the same key runs again with a file that is right', async () => {
      const contact = await create(base, { firstName: 'Refused' });
      const url = `${base}/api/contacts/${contact.body.id}/attachments`;
      const key = randomUUID();
      const empty = await postFile(url, { ...note, bytes: '' }, { key });
      expect(empty.status).toBe(400);
      const unknown = await postFile(`${base}/api/contacts/${randomUUID()}/attachments`, note, { key });
      expect(unknown.status).toBe(404);
      const recorded = await postFile(url, note, { key });
      expect(recorded.status).toBe(201);
      expect(recorded.headers.get('idempotent-replayed')).toBeNull();
      expect(await attachmentsOf(contact.body.id)).toHaveLength(1);
    });

    const csvOf = (domain: string, rows = 3) =>
      [
        'firstName,email',
        ...Array.from({ length: rows }, (_, n) => `Row${n},row${n}@${domain}`),
        'Broken,not-an-email',
      ].join('\n');
    const csvFile = (bytes: string) => ({ bytes, name: 'contacts.csv', type: 'text/csv' });
    const importUrl = `/api/contacts/import`;
    const total = async (search: string) =>
      (await rest('GET', `${base}/api/contacts?search=${encodeURIComponent(search)}`)).body.total as number;

    it('answers an import sent again with the same summary, importing once', async () => {
      const domain = `once-${randomUUID().slice(0, 8)}.example`;
      const key = randomUUID();
      const fields = { mapping: JSON.stringify({ firstName: 'firstName', email: 'email' }) };
      const first = await postFile(`${base}${importUrl}`, csvFile(csvOf(domain)), { key, fields });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ created: 3, skipped: 1 });
      const again = await postFile(`${base}${importUrl}`, csvFile(csvOf(domain)), { key, fields });
      expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: first.body });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await total(domain)).toBe(3);
      expect(await storedObjects(platform, 'staging/imports')).toEqual([]);

      // Other fields (here the mapping), or another file, under the key: 422, nothing imported.
      const remapped = await postFile(`${base}${importUrl}`, csvFile(csvOf(domain)), { key });
      expect(remapped.status).toBe(422);
      expect(remapped.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
      const other = await postFile(`${base}${importUrl}`, csvFile(csvOf(`x${domain}`)), { key, fields });
      expect(other.status).toBe(422);
      expect(await total(`x${domain}`)).toBe(0);
      expect(await storedObjects(platform, 'staging/imports')).toEqual([]);
    });

    it('answers a background import sent again with the same 202 and job', async () => {
      const domain = `async-${randomUUID().slice(0, 8)}.example`;
      const key = randomUUID();
      const headers = { prefer: 'respond-async' };
      const first = await postFile(`${base}${importUrl}`, csvFile(csvOf(domain)), { key, headers });
      expect(first.status).toBe(202);
      const again = await postFile(`${base}${importUrl}`, csvFile(csvOf(domain)), { key, headers });
      expect({ status: again.status, body: again.body, location: again.headers.get('location') }).toEqual({
        status: 202,
        body: first.body,
        location: first.headers.get('location'),
      });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      for (let tries = 0; ; tries++) {
        const job = await rest('GET', `${base}${first.headers.get('location')}`);
        if (job.body.status === 'succeeded') break;
        if (tries > 400) throw new Error(`the import is still ${job.body.status}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(await total(domain)).toBe(3);
      expect(await storedObjects(platform, 'staging/imports')).toEqual([]);
    });

    it('refuses importContacts under a key (it would wait for a job its own transaction hides) rather than hang', async () => {
      const reserved = await graphql<{ reserveContactImport: { uploadId: string } }>(
        platform.urls.gateway,
        'mutation { reserveContactImport { uploadId } }',
      );
      const refused = await graphql(
        platform.urls.gateway,
        'mutation ($id: ID!) { importContacts(uploadId: $id) { rows } }',
        { id: reserved.body.data!.reserveContactImport.uploadId },
        { 'idempotency-key': randomUUID() },
      );
      expect(refused.body.errors?.[0].extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        errors: [{ field: 'Idempotency-Key', message: expect.stringContaining('startContactImport') }],
      });
    });

    it('keeps no refused import: the same key runs again with a file that is right', async () => {
      const domain = `fixed-${randomUUID().slice(0, 8)}.example`;
      const key = randomUUID();
      const binary = await postFile(`${base}${importUrl}`, csvFile('\u0000\u0001\u0002'), { key });
      expect(binary.status).toBe(400);
      const imported = await postFile(`${base}${importUrl}`, csvFile(csvOf(domain)), { key });
      expect(imported.status).toBe(200);
      expect(imported.headers.get('idempotent-replayed')).toBeNull();
      expect(await total(domain)).toBe(3);
    });
  });
});

describe('Idempotency-Key while the first request runs (PostgreSQL)', () => {
  const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
  let platform: TestPlatform;
  let base: string;
  let database: pg.Client;

  beforeAll(async () => {
    if (!onPostgres) return;
    platform = await startTestPlatform();
    base = platform.urls.contactsRest;
    database = new pg.Client({ connectionString: platform.config.env.DATABASE_URL });
    await database.connect();
  });
  afterAll(async () => {
    await database?.end();
    await platform?.stop();
  });

  /** Holds every insert into contacts until `release`: a request that creates one is kept running meanwhile. */
  async function holdContactInserts(): Promise<{ release: () => Promise<void> }> {
    await database.query('begin');
    await database.query('lock table contacts.contact in share row exclusive mode');
    return { release: async () => void (await database.query('commit')) };
  }

  /**
   * Waits until the server has the key: `done`, its record committed; `running`, its request claimed it and
   * waits on the held `table` (a running claim is in the request's own transaction, which no one else sees).
   */
  async function untilKey(key: string, state: 'running' | 'done', table = 'contacts.contact'): Promise<void> {
    const probe = new pg.Client({ connectionString: platform.config.env.DATABASE_URL });
    await probe.connect();
    const running = `select 1 from pg_locks where relation = $1::regclass and not granted
      and database = (select oid from pg_database where datname = current_database())`;
    try {
      for (let tries = 0; tries < 200; tries += 1) {
        const { rows } =
          state === 'done'
            ? await probe.query(`select 1 from contacts.idempotency_key where key = $1 and state = 'done'`, [key])
            : await probe.query(running, [table]);
        if (rows.length) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`the key never reached ${state}`);
    } finally {
      await probe.end();
    }
  }

  (onPostgres ? it : it.skip)('answers 409 while the first request with the key still runs', async () => {
    const key = randomUUID();
    const name = `Running${key.slice(0, 8)}`;
    const held = await holdContactInserts();
    const first = create(base, { firstName: name }, key);
    await untilKey(key, 'running');
    const meanwhile = await create(base, { firstName: name }, key);
    expect(meanwhile.status).toBe(409);
    expect(meanwhile.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    await held.release();
    const answered = await first;
    expect(answered.status).toBe(201);
    const replayed = await create(base, { firstName: name }, key);
    expect({ status: replayed.status, body: replayed.body }).toEqual({ status: 201, body: answered.body });
    expect(await contactsNamed(base, name)).toHaveLength(1);
  });

  (onPostgres ? it : it.skip)('answers 409 to an upload sent again while its first commit still runs', async () => {
    const key = randomUUID();
    const csv = { bytes: 'firstName,email\nHeld,held@running.example\n', name: 'held.csv', type: 'text/csv' };
    const background = { key, headers: { prefer: 'respond-async' } };
    // The commit creates the import's row: held, it keeps running with its key claimed.
    await database.query('begin');
    await database.query('lock table contacts.contact_import in share row exclusive mode');
    const first = postFile(`${base}/api/contacts/import`, csv, background);
    await untilKey(key, 'running', 'contacts.contact_import');
    const meanwhile = await postFile(`${base}/api/contacts/import`, csv, background);
    expect(meanwhile.status).toBe(409);
    expect(meanwhile.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    await database.query('commit');
    const answered = await first;
    expect(answered.status).toBe(202);
    const replayed = await postFile(`${base}/api/contacts/import`, csv, background);
    expect({ status: replayed.status, body: replayed.body }).toEqual({ status: 202, body: answered.body });
    expect(await storedObjects(platform, 'staging/imports')).toEqual([]);
  });

  (onPostgres ? it : it.skip)(
    'answers a retry after the connection was cut with what the server committed: one contact, the same answer',
    async () => {
      const key = randomUUID();
      const name = `Cut${key.slice(0, 8)}`;
      const body = JSON.stringify({ firstName: name });
      const held = await holdContactInserts();
      const { hostname, port } = new URL(base);
      const socket = net.connect(Number(port), hostname);
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        [
          'POST /api/contacts HTTP/1.1',
          `Host: ${hostname}:${port}`,
          'Content-Type: application/json',
          `Content-Length: ${Buffer.byteLength(body)}`,
          `Idempotency-Key: ${key}`,
          '',
          body,
        ].join('\r\n'),
      );
      await untilKey(key, 'running');
      // The client gives up before any answer; the server goes on and commits.
      socket.destroy();
      await held.release();
      await untilKey(key, 'done');

      const retried = await create(base, { firstName: name }, key);
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      const stored = await contactsNamed(base, name);
      expect(stored).toHaveLength(1);
      expect(retried.body.id).toBe(stored[0].id);
      expect(retried.headers.get('location')).toBe(`/api/contacts/${stored[0].id}`);
    },
  );
});
