import 'reflect-metadata';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { stringify } from 'csv-stringify/sync';
import pg from 'pg';
import { createLogger } from '#lib/observability/logger.js';
import { deriveKey, masterKey, signPayload } from '#lib/secrets.js';
import { startContactsRest } from '#rest-adapters/contacts/index.js';
import { LogCollector } from '#test/support/logs.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

const COLUMNS = ['id', 'firstName', 'lastName', 'email', 'phone', 'company', 'tags', 'createdAt', 'updatedAt'];
const SCROLL = `query ($after: String, $search: String) {
  contactScroll(first: 1000, after: $after, search: $search) {
    nodes { id firstName lastName email phone company tags createdAt updatedAt }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** Until `check` holds, for at most `ms`. */
async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  for (const start = Date.now(); Date.now() - start < ms;) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

describe('contacts: CSV export streamed by the subgraph', () => {
  let platform: TestPlatform;
  let base: string;
  let exportsUrl: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    base = platform.urls.contactsRest;
    exportsUrl = platform.subgraphs.contacts.url.replace(/\/graphql$/, '/exports');
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('writes the same bytes as the export written from GraphQL pages (quoting, CRLF, formulas, times)', async () => {
    const made = [
      { firstName: '=1+2', lastName: 'Comma, "Quote"\r\nBreak', email: 'bytes1@export.example', tags: ['@a', 'b'] },
      { firstName: 'Plain', email: 'bytes2@export.example', phone: '+1 555', company: '', tags: [] },
      { firstName: '\tTab', lastName: '-minus', email: 'bytes3@export.example', company: 'Ünïcødé ✓' },
    ];
    for (const contact of made) expect((await rest('POST', `${base}/api/contacts`, contact)).status).toBe(201);

    // What the export wrote when it walked contactScroll and formatted each row with csv-stringify.
    const rows: string[][] = [];
    for (let after: string | null = null; ;) {
      const page: any = await graphql(platform.urls.gateway, SCROLL, { after, search: 'export.example' });
      const scroll = page.body.data.contactScroll;
      for (const node of scroll.nodes) {
        rows.push(COLUMNS.map((column) => (column === 'tags' ? node.tags.join(';') : (node[column] ?? ''))));
      }
      if (!scroll.pageInfo.hasNextPage) break;
      after = scroll.pageInfo.endCursor;
    }
    const formula = /^[=+\-@\t\r]/;
    const expected = stringify(rows, {
      header: true,
      columns: COLUMNS,
      record_delimiter: '\r\n',
      cast: { string: (value: string) => (formula.test(value) ? `'${value}` : value) },
    });

    const response = await fetch(`${base}/api/contacts/export?search=export.example`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(expected);
  });

  it('refuses a forged, altered, expired or other-purpose grant with a problem', async () => {
    const key = deriveKey(masterKey(platform.config), 'contact-exports');
    const expired = signPayload(key, { s: null, e: Date.now() - 1000 });
    const valid = signPayload(key, { s: null, e: Date.now() + 60_000 });
    const [body, signature] = valid.split('.');
    const altered = `${Buffer.from(JSON.stringify({ s: null, e: Date.now() + 3_600_000 })).toString('base64url')}.${signature}`;
    const otherPurpose = signPayload(deriveKey(masterKey(platform.config), 'contact-attachment-uploads'), {
      s: null,
      e: Date.now() + 60_000,
    });
    for (const grant of [expired, altered, otherPurpose, `${body}.forged`, 'nonsense']) {
      const response = await fetch(`${exportsUrl}/${grant}`);
      expect(response.status).toBe(403);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(await response.json()).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    }
    // The same grant, signed right, is served: the refusals above are about the grant alone.
    const served = await fetch(`${exportsUrl}/${valid}`);
    expect(served.status).toBe(200);
    expect((await served.text()).split('\r\n')[0]).toBe(COLUMNS.join(','));
  });

  it('a grant is handed out only through the operation, which carries its search', async () => {
    const { body } = await graphql<{ contactExportGrant: { grant: string; expiresAt: string } }>(
      platform.urls.gateway,
      'query ($search: String) { contactExportGrant(search: $search) { grant expiresAt } }',
      { search: 'bytes2' },
    );
    const { grant, expiresAt } = body.data!.contactExportGrant;
    expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(60_000);
    const lines = (await (await fetch(`${exportsUrl}/${grant}`)).text()).split('\r\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('bytes2@export.example');
  });

  it('reads the same file over HTTP from a contacts subgraph in another process (CONTACTS_SUBGRAPH_URL)', async () => {
    // A REST adapter that knows the subgraph by URL only, as a contacts-rest part deployed apart does.
    const apart = await startContactsRest(
      { config: platform.config, logger: createLogger(platform.config) },
      { port: 0, client: platform.gateway.client, contactsSubgraphUrl: platform.subgraphs.contacts.url },
    );
    try {
      const [here, there] = await Promise.all(
        [base, apart.url].map(async (url) => (await fetch(`${url}/api/contacts/export?search=export.example`)).text()),
      );
      expect(there.split('\r\n').length).toBeGreaterThan(2);
      expect(there).toBe(here);
    } finally {
      await apart.close();
    }
  });

  it('answers 502 naming only the upstream when the subgraph cannot be reached; the socket error goes to the log', async () => {
    // A port nothing listens on: the connection is refused, and the error names the address and port.
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as net.AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const logs = new LogCollector();
    const apart = await startContactsRest(
      {
        config: platform.config,
        logger: createLogger({ env: { ...platform.config.env, LOG_LEVEL: 'error' }, logFormat: 'json' }, logs),
      },
      { port: 0, client: platform.gateway.client, contactsSubgraphUrl: `http://127.0.0.1:${port}/graphql` },
    );
    try {
      const response = await fetch(`${apart.url}/api/contacts/export`);
      expect(response.status).toBe(502);
      const problem = (await response.json()) as Record<string, unknown>;
      expect(problem).toMatchObject({ status: 502, code: 'BAD_GATEWAY' });
      expect(JSON.stringify(problem)).not.toMatch(new RegExp(`127\\.0\\.0\\.1|${port}|ECONNREFUSED`));
      expect(JSON.stringify(logs.lines)).toMatch(new RegExp(`ECONNREFUSED.*127\\.0\\.0\\.1:${port}`));
    } finally {
      await apart.close();
    }
  });

  const onPostgreSQL = process.env.TEST_DATABASE_URL ? it : it.skip;

  onPostgreSQL('a client that goes away mid-export ends the COPY and frees its connection', async () => {
    const databaseUrl = platform.config.env.DATABASE_URL!;
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      // Enough rows that the file (about 70 MB) cannot sit in the sockets' buffers: the COPY waits for the reader.
      await client.query(`
        insert into contacts.contact (id, first_name, last_name, email, tags, created_at, updated_at)
        select gen_random_uuid(), 'Many' || g, repeat('x', 1000), 'abort' || g || '@export.example', array['t'], now(), now()
        from generate_series(1, 60000) g`);
      const copying = async () =>
        Number(
          (
            await client.query(
              `select count(*) from pg_stat_activity where datname = current_database() and backend_type = ` +
                `'client backend' and state <> 'idle' and query ilike 'copy (select%' and pid <> pg_backend_pid()`,
            )
          ).rows[0].count,
        );

      const controller = new AbortController();
      const response = await fetch(`${base}/api/contacts/export`, { signal: controller.signal });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      const first = await reader.read();
      expect(first.value?.length).toBeGreaterThan(0);
      // Not reading further: backpressure holds the COPY where it is, still running.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await copying()).toBe(1);

      controller.abort();
      await reader.cancel().catch(() => undefined);
      expect(await eventually(async () => (await copying()) === 0)).toBe(true);
      // The export pool is usable again: another export (a COPY too, of nothing) still runs afterwards.
      const again = await fetch(`${base}/api/contacts/export?search=zzzznothing`);
      expect(await again.text()).toBe(`${COLUMNS.join(',')}\r\n`);
    } finally {
      await client.query(`delete from contacts.contact where email like 'abort%@export.example'`);
      await client.end();
    }
  });
});

describe('contacts: export bytes behind SUBGRAPH_TOKEN', () => {
  const token = 'export-test-subgraph-token-0123456789';
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ SUBGRAPH_TOKEN: token });
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('the subgraph serves a grant only to a caller holding the token, which an adapter apart sends', async () => {
    const { body } = await graphql<{ contactExportGrant: { grant: string } }>(
      platform.urls.gateway,
      '{ contactExportGrant { grant } }',
    );
    const url = platform.subgraphs.contacts.url.replace(
      /\/graphql$/,
      `/exports/${body.data!.contactExportGrant.grant}`,
    );
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { 'x-subgraph-token': token } })).status).toBe(200);

    const apart = await startContactsRest(
      { config: platform.config, logger: createLogger(platform.config) },
      { port: 0, client: platform.gateway.client, contactsSubgraphUrl: platform.subgraphs.contacts.url },
    );
    try {
      const response = await fetch(`${apart.url}/api/contacts/export`);
      expect(response.status).toBe(200);
      expect((await response.text()).split('\r\n')[0]).toBe(COLUMNS.join(','));
    } finally {
      await apart.close();
    }
  });
});
