import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import { rest, startTestPlatform, type TestPlatform } from '../support/platform.js';
import { freePort } from '../support/ports.js';

/** The contacts whose first name is `name` (a name of the test's own). */
async function contactsNamed(base: string, name: string): Promise<{ id: string }[]> {
  const found = await rest('GET', `${base}/api/contacts?search=${encodeURIComponent(name)}`);
  return found.body.data.filter((contact: { firstName: string }) => contact.firstName === name);
}

const create = (base: string, body: Record<string, unknown>, key?: string) =>
  rest('POST', `${base}/api/contacts`, body, key === undefined ? {} : { 'idempotency-key': key });

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

  /** Waits until the key's record is in `state` (the server has it). */
  async function untilKey(key: string, state: 'running' | 'done'): Promise<void> {
    const probe = new pg.Client({ connectionString: platform.config.env.DATABASE_URL });
    await probe.connect();
    try {
      for (let tries = 0; tries < 200; tries += 1) {
        const { rows } = await probe.query('select state from contacts.idempotency_key where key = $1', [key]);
        if (rows[0]?.state === state) return;
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
