import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { clientBucket } from '#lib/http/client-address.js';
import { parseTrustProxy } from '#lib/trust-proxy.js';
import { loadConfig } from '#lib/config.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { TINY_PNG } from '#test/social-reach/fake-image-api.js';

type Answer = {
  data?: Record<string, any> | null;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
};
const codeOf = (answer: Answer) => answer.errors?.[0]?.extensions?.code;

/** An OpenAI-compatible images API whose image `url` leads where each test wants, counting fetches of the image. */
class ImageApi {
  answerUrl = '';
  imageFetches = 0;
  private server = http.createServer((req, res) => {
    if (req.method === 'POST') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ created: 1, data: [{ url: this.answerUrl }] }));
    }
    if (req.url === '/image.png') {
      this.imageFetches++;
      res.writeHead(200, { 'content-type': 'image/png' });
      return void res.end(TINY_PNG);
    }
    if (req.url === '/redirect') {
      res.writeHead(302, { location: `http://localhost:${this.port}/image.png` });
      return void res.end();
    }
    if (req.url === '/endless') {
      // No Content-Length: only counting the bytes stops this.
      res.writeHead(200, { 'content-type': 'image/png' });
      const chunk = Buffer.alloc(1024 * 1024, 1);
      const write = () => {
        while (res.write(chunk)) if (res.destroyed) return;
        res.once('drain', write);
      };
      res.on('error', () => undefined);
      return write();
    }
    res.writeHead(404).end();
  });
  port = 0;

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('limits on every face', () => {
  let platform: TestPlatform;
  const images = new ImageApi();
  let owner: Record<string, string>;

  beforeAll(async () => {
    await images.start();
    platform = await startTestPlatform({
      TRUST_PROXY: 'loopback',
      IMPORT_MAX_ROWS: '5',
      AI_IMAGE_API_URL: `http://127.0.0.1:${images.port}/v1`,
      AI_IMAGE_API_KEY: 'sk-test',
      AI_IMAGE_MODEL: 'gpt-image-1',
      AI_IMAGE_RATE_LIMIT: '100',
    });
    owner = { authorization: `Bearer ${await platform.token('lim')}` };
  });
  afterAll(async () => {
    await platform?.stop();
    await images.stop();
  });

  it('gives each subgraph port the gateway’s alias and token limits', async () => {
    const fields = [
      [platform.subgraphs.social, 'viewer { userId }'],
      [platform.subgraphs.surveys, 'surveys(first: 1) { totalCount }'],
      [platform.subgraphs.contacts, 'contacts(first: 1) { totalCount }'],
    ] as const;
    for (const [subgraph, field] of fields) {
      const aliases = `{ ${Array.from({ length: 40 }, (_, index) => `a${index}: ${field}`).join(' ')} }`;
      const tokens = `{ ${Array.from({ length: 2600 }, () => '__typename').join(' ')} }`;
      expect((await graphql(subgraph.url, '{ __typename }')).body.data).toEqual({ __typename: 'Query' });
      const tooManyAliases = await graphql(subgraph.url, aliases);
      expect(tooManyAliases.body.errors?.[0]?.message).toMatch(/aliases/i);
      const tooManyTokens = await graphql(subgraph.url, tokens);
      // Refused in validation (graphql-armor's token limit aborts it), never run.
      expect(tooManyTokens.body.data).toBeUndefined();
      expect(tooManyTokens.body.errors?.[0]?.message).toMatch(/token|validation aborted/i);
    }
  });

  it(
    'names the limit a document is over in the caller’s terms, with no "Syntax Error" for a document that ' +
      'parsed, on the gateway and a subgraph port',
    async () => {
      const nested = (levels: number): string => (levels ? `surveys { contact { ${nested(levels - 1)} } }` : 'id');
      const refusals: Array<[string, string, RegExp]> = [
        [
          'cost',
          '{ contacts(first: 100000) { nodes { id firstName } } }',
          /^The query costs \d+, over the limit of 50000: ask for fewer items \(a smaller first or last\)/,
        ],
        [
          'depth',
          `{ contacts(first: 1) { nodes { ${nested(5)} } } }`,
          /^The query's depth is 13 levels of fields, over the limit of 12/,
        ],
        [
          'aliases',
          `{ ${Array.from({ length: 31 }, (_, index) => `a${index}: contacts(first: 1) { totalCount }`).join(' ')} }`,
          /^The query has 31 aliases, over the limit of 30/,
        ],
        [
          'directives',
          `{ ${Array.from({ length: 51 }, () => '__typename @include(if: true)').join(' ')} }`,
          /^The query has 51 directives, over the limit of 50/,
        ],
        [
          'tokens',
          `{ ${Array.from({ length: 5001 }, () => '__typename').join(' ')} }`,
          /^The document has more than 5000 tokens, the limit: send a shorter document/,
        ],
      ];
      for (const [limit, query, message] of refusals) {
        const faces = [platform.urls.gateway, ...(limit === 'depth' ? [] : [platform.subgraphs.contacts.url])];
        for (const url of faces) {
          const answer = await graphql(url, query);
          expect({ limit, url, status: answer.status, data: answer.body.data }).toEqual({
            limit,
            url,
            status: 400,
            data: undefined,
          });
          expect(answer.body.errors).toHaveLength(1);
          expect(answer.body.errors?.[0]?.message).toMatch(message);
          expect(answer.body.errors?.[0]?.extensions?.code).toBe(
            limit === 'tokens' ? 'GRAPHQL_PARSE_FAILED' : 'GRAPHQL_VALIDATION_FAILED',
          );
        }
      }
    },
  );

  it('counts sign-in mail per client in the subgraph: 30 aliases in one GraphQL request use up the client’s 30', async () => {
    const request = (count: number, from: number, headers: Record<string, string> = {}) =>
      graphql(
        platform.urls.gateway,
        `mutation { ${Array.from(
          { length: count },
          (_, index) => `m${index}: requestMagicLink(input: { email: "user${from + index}@example.com" }) { accepted }`,
        ).join(' ')} }`,
        {},
        headers,
      );
    const first = await request(30, 0);
    expect(first.body.errors).toBeUndefined();
    const again = await request(1, 100);
    expect(codeOf(again.body as Answer)).toBe('RATE_LIMITED');
    // The REST face shares the same count.
    expect(
      (await rest('POST', `${platform.urls.surveysRest}/api/auth/magic/request`, { email: 'rest@example.com' })).status,
    ).toBe(429);
    // Behind a trusted proxy (TRUST_PROXY=loopback), X-Forwarded-For names the client; IPv6 clients count per /64.
    const proxied = (address: string) => ({ 'x-forwarded-for': address });
    expect((await request(1, 200, proxied('203.0.113.7'))).body.errors).toBeUndefined();
    expect((await request(30, 300, proxied('2001:db8:1:2::1'))).body.errors).toBeUndefined();
    expect(codeOf((await request(1, 400, proxied('2001:db8:1:2:ffff::9'))).body as Answer)).toBe('RATE_LIMITED');
    expect((await request(1, 500, proxied('2001:db8:1:3::1'))).body.errors).toBeUndefined();
  });

  it('reads TRUST_PROXY as Express does and buckets IPv6 per /64', () => {
    expect(parseTrustProxy(undefined)).toEqual({ setting: false });
    expect(parseTrustProxy('2')).toEqual({ setting: 2 });
    expect(parseTrustProxy('loopback, 10.0.0.0/8, fd00::/8')).toEqual({
      setting: ['loopback', '10.0.0.0/8', 'fd00::/8'],
    });
    expect(() => loadConfig({ TRUST_PROXY: 'the proxy' })).toThrow(/TRUST_PROXY/);
    expect(clientBucket('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientBucket('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientBucket('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientBucket('::1')).toBe('0:0:0:0::/64');
  });

  describe('CSV import', () => {
    const importCsv = async (csv: string) => {
      const form = new FormData();
      form.append('file', new Blob([csv], { type: 'text/csv' }), 'contacts.csv');
      const answer = await fetch(`${platform.urls.contactsRest}/api/contacts/import`, { method: 'POST', body: form });
      return {
        status: answer.status,
        body: (await answer.json()) as { detail?: string; errors?: Array<{ field: string }> },
      };
    };
    const count = async () => (await rest('GET', `${platform.urls.contactsRest}/api/contacts`)).body.total as number;

    it(
      'refuses more rows than IMPORT_MAX_ROWS (413), more columns than IMPORT_MAX_COLUMNS (400), a record ' +
        'over IMPORT_MAX_RECORD_BYTES (413), writing nothing',
      async () => {
        const before = await count();
        const rows = await importCsv(
          `firstName,email\n${Array.from({ length: 6 }, (_, index) => `R${index},r${index}@example.com`).join('\n')}\n`,
        );
        expect(rows.status).toBe(413);
        expect(rows.body.detail).toContain('IMPORT_MAX_ROWS');
        expect(rows.body.errors?.[0].field).toBe('file');
        const header = Array.from({ length: 51 }, (_, index) => `c${index}`).join(',');
        const columns = await importCsv(`${header}\n${Array.from({ length: 51 }, () => 'x').join(',')}\n`);
        expect(columns.status).toBe(400);
        expect(columns.body.detail ?? JSON.stringify(columns.body)).toContain('IMPORT_MAX_COLUMNS');
        const record = await importCsv(`firstName,email\n"${'a'.repeat(200_000)}",big@example.com\n`);
        expect(record.status).toBe(413);
        expect(record.body.detail).toContain('IMPORT_MAX_RECORD_BYTES');
        expect(await count()).toBe(before);
        const fine = await importCsv('firstName,email\nAda,ada@example.com\n');
        expect(fine.status).toBe(200);
      },
    );

    it('defaults to 512 MiB and 1,048,576 data rows, what the largest CRMs take in one file', () => {
      expect(loadConfig({}).env.IMPORT_MAX_BYTES).toBe(512 * 1024 * 1024);
      expect(loadConfig({}).env.IMPORT_MAX_ROWS).toBe(1_048_576);
    });
  });

  describe('AI image URL answers', () => {
    const generate = () =>
      graphql(platform.urls.gateway, 'mutation { generateImage(input: { prompt: "a red door" }) { id } }', {}, owner);

    it('fetches an image only from the provider’s host, follows no redirect, and stops reading at the byte cap', async () => {
      images.answerUrl = `http://127.0.0.1:${images.port}/image.png`;
      expect((await generate()).body.data?.generateImage).toBeTruthy();
      expect(images.imageFetches).toBe(1);

      images.answerUrl = `http://localhost:${images.port}/image.png`;
      const otherHost = await generate();
      expect(codeOf(otherHost.body as Answer)).toBe('BAD_GATEWAY');
      expect(otherHost.body.errors?.[0].message).toMatch(/host that is not allowed/);
      images.answerUrl = `http://127.0.0.1:${images.port}/redirect`;
      expect(codeOf((await generate()).body as Answer)).toBe('BAD_GATEWAY');
      expect(images.imageFetches).toBe(1);

      images.answerUrl = `http://127.0.0.1:${images.port}/endless`;
      const endless = await generate();
      expect(codeOf(endless.body as Answer)).toBe('BAD_GATEWAY');
      expect(endless.body.errors?.[0].message).toMatch(/more bytes than an image may have/);
    });
  });
});

describe('subgraphs behind SUBGRAPH_HOST and SUBGRAPH_TOKEN', () => {
  let platform: TestPlatform;
  const token = 'a-shared-secret-of-some-length';
  /** The token being rotated out: still accepted, no longer sent. */
  const previous = 'the-previous-shared-secret';

  beforeAll(async () => {
    platform = await startTestPlatform({ HOST: '0.0.0.0', SUBGRAPH_TOKEN: `${token},${previous}` });
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('answers only calls carrying the token; the gateway sends it', async () => {
    const url = platform.subgraphs.contacts.url;
    expect(codeOf((await graphql(url, '{ __typename }')).body as Answer)).toBe('UNAUTHENTICATED');
    expect((await graphql(url, '{ __typename }', {}, { 'x-subgraph-token': 'wrong' })).status).toBe(401);
    for (const accepted of [token, previous])
      expect((await graphql(url, '{ __typename }', {}, { 'x-subgraph-token': accepted })).body.data).toEqual({
        __typename: 'Query',
      });
    // Probes stay open to the orchestrator.
    expect((await fetch(url.replace('/graphql', '/healthz'))).status).toBe(200);
    // Through the gateway and the REST services all works.
    expect((await graphql(platform.urls.gateway, '{ contacts(first: 1) { totalCount } }')).body.data).toEqual({
      contacts: { totalCount: 0 },
    });
    expect((await rest('POST', `${platform.urls.contactsRest}/api/contacts`, { firstName: 'Via REST' })).status).toBe(
      201,
    );
  });

  it('believes the client address a REST service deployed apart forwards only with the token', async () => {
    const ask = (count: number, from: number, headers: Record<string, string>) =>
      graphql(
        platform.urls.gateway,
        `mutation { ${Array.from(
          { length: count },
          (_, index) =>
            `m${index}: requestMagicLink(input: { email: "apart${from + index}@example.com" }) { accepted }`,
        ).join(' ')} }`,
        {},
        headers,
      );
    const internal = { 'x-platform-client': '198.51.100.20', 'x-subgraph-token': token };
    expect((await ask(30, 0, internal)).body.errors).toBeUndefined();
    expect(codeOf((await ask(1, 100, internal)).body as Answer)).toBe('RATE_LIMITED');
    // Without the token the header is nobody's word: the caller is counted as itself.
    expect((await ask(1, 200, { 'x-platform-client': '198.51.100.20' })).body.errors).toBeUndefined();
    expect(
      (await ask(1, 300, { 'x-platform-client': '198.51.100.20', 'x-subgraph-token': 'a-wrong-secret-of-some-length' }))
        .body.errors,
    ).toBeUndefined();
  });

  it('listens on loopback only by default, while HOST=0.0.0.0 opens the other parts', async () => {
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
    if (!external) return; // a machine with loopback only cannot tell the two apart
    const port = (url: string) => new URL(url).port;
    await expect(fetch(`http://${external}:${port(platform.subgraphs.social.url)}/healthz`)).rejects.toThrow();
    expect((await fetch(`http://${external}:${port(platform.urls.socialRest)}/health`)).status).toBe(200);
  });
});
