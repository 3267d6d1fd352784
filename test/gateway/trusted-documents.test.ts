import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generate } from '@graphql-codegen/cli';
import { ConfigError, loadConfig } from '#lib/config.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { documentHash } from '#lib/trusted-documents.js';
import { SUPERGRAPH_PATH } from '#gateway/gateway.js';
import { ContactPageDocument } from '#rest-adapters/contacts/operations.generated.js';
import { LogCollector } from '#test/support/logs.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

/** The client's operation, as an application keeps it next to its code. */
const OPERATION = `query ContactCount {
  contacts(first: 2) {
    totalCount
  }
}
`;

type Answer = {
  data?: Record<string, any> | null;
  errors?: Array<{ message: string; extensions?: Record<string, any> }>;
};

/** `persisted-documents.json` as GraphQL Code Generator's client preset writes it from OPERATION. */
async function manifestFromCodegen(folder: string): Promise<Record<string, string>> {
  writeFileSync(path.join(folder, 'contact-count.graphql'), OPERATION);
  const files = await generate(
    {
      schema: SUPERGRAPH_PATH,
      documents: path.join(folder, '*.graphql'),
      silent: true,
      generates: { [`${folder}/gql/`]: { preset: 'client', presetConfig: { persistedDocuments: true } } },
    },
    false,
  );
  const manifest = files.find((file: { filename: string }) => file.filename.endsWith('persisted-documents.json'));
  if (!manifest)
    throw new Error(
      `no persisted-documents.json among ${files.map((file: { filename: string }) => file.filename).join(', ')}`,
    );
  return JSON.parse(manifest.content) as Record<string, string>;
}

async function post(url: string, body: unknown): Promise<{ status: number; body: Answer }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Answer };
}

describe('a safelist of trusted documents (TRUSTED_DOCUMENTS)', () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'trusted-documents-'));
  const manifestPath = path.join(folder, 'persisted-documents.json');
  const logs = new LogCollector();
  let manifest: Record<string, string>;
  /** The manifest's one key, `sha256:<hex>`, and its hex. */
  let id: string;
  let hash: string;
  let platform: TestPlatform;

  beforeAll(async () => {
    manifest = await manifestFromCodegen(folder);
    writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
    [id] = Object.keys(manifest);
    hash = id.replace(/^sha256:/, '');
    platform = await startTestPlatform({ TRUSTED_DOCUMENTS: manifestPath, LOG_LEVEL: 'info' }, { logStream: logs });
  });
  afterAll(async () => {
    await platform?.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('reads the manifest the client preset writes: "sha256:" and the hex SHA-256 of each document text', () => {
    expect(Object.keys(manifest)).toHaveLength(1);
    expect(manifest[id]).toContain('query ContactCount');
    expect(id).toBe(`sha256:${documentHash(manifest[id])}`);
    expect(logs.lines.map((line) => line.msg)).toContainEqual(expect.stringMatching(/safelist on .*: 1 documents/));
    // The README shows this very manifest.
    expect(readFileSync(path.join(PROJECT_ROOT, 'docs', 'graph.md'), 'utf8')).toContain(
      JSON.stringify({ [id]: manifest[id] }, null, 2),
    );
  });

  it('runs a trusted document named by documentId (sha256:<hex> or the bare hex), by POST and GET', async () => {
    for (const documentId of [`sha256:${hash}`, hash]) {
      const answer = await post(platform.urls.gateway, { documentId });
      expect(answer).toEqual({ status: 200, body: { data: { contacts: { totalCount: 0 } } } });
    }
    const viaGet = await fetch(`${platform.urls.gateway}?documentId=sha256:${hash}`, {
      headers: { accept: 'application/json' },
    });
    expect(viaGet.status).toBe(200);
    expect(await viaGet.json()).toEqual({ data: { contacts: { totalCount: 0 } } });
  });

  it('runs a trusted document sent as its text, and by its APQ hash alone', async () => {
    expect((await graphql(platform.urls.gateway, manifest[id])).body).toEqual({
      data: { contacts: { totalCount: 0 } },
    });
    const apq = await post(platform.urls.gateway, { extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
    expect(apq.body).toEqual({ data: { contacts: { totalCount: 0 } } });
  });

  it('refuses any other document with 400 PERSISTED_QUERY_NOT_FOUND, an APQ registration included', async () => {
    const other = 'query { contacts(first: 1) { totalCount } }';
    const refusals = [
      await graphql(platform.urls.gateway, other),
      // The same operation, formatted otherwise, is another document.
      await graphql(
        platform.urls.gateway,
        `
          ${manifest[id]}
        `,
      ),
      await post(platform.urls.gateway, { documentId: `sha256:${documentHash(other)}` }),
      await post(platform.urls.gateway, {
        query: other,
        extensions: { persistedQuery: { version: 1, sha256Hash: documentHash(other) } },
      }),
    ];
    for (const refusal of refusals) {
      expect(refusal.status).toBe(400);
      expect(refusal.body.data).toBeUndefined();
      expect(refusal.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
      expect(refusal.body.errors?.[0]?.message).toMatch(/TRUSTED_DOCUMENTS/);
    }
    // The refused registration left nothing behind: its hash alone is still unknown.
    const lookup = await post(platform.urls.gateway, {
      extensions: { persistedQuery: { version: 1, sha256Hash: documentHash(other) } },
    });
    expect(lookup.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(lookup.body.data).toBeUndefined();
  });

  it('keeps the REST adapters working: their operations are trusted, in process and over HTTP', async () => {
    const page = await rest('GET', `${platform.urls.contactsRest}/api/contacts`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ data: [], total: 0 });
    // A gateway deployed apart receives the adapters' texts over HTTP, as here.
    const overHttp = await graphql(platform.urls.gateway, String(ContactPageDocument), { page: 1, limit: 5 });
    expect(overHttp.status).toBe(200);
    expect(overHttp.body.data).toMatchObject({ contactPage: { total: 0 } });
  });
});

describe('a bad TRUSTED_DOCUMENTS refuses to start, naming the problem', () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'trusted-documents-bad-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const manifestOf = (name: string, text: string) => {
    const file = path.join(folder, name);
    writeFileSync(file, text);
    return file;
  };
  const valid = 'query A { __typename }';

  it.each([
    ['an absent file', path.join(folder, 'absent.json'), /absent\.json cannot be read/],
    ['a file that is not JSON', manifestOf('broken.json', '{ "a": '), /is not valid JSON/],
    ['a list', manifestOf('list.json', '["query { a }"]'), /one JSON object/],
    ['a key that is no SHA-256', manifestOf('key.json', JSON.stringify({ abc: valid })), /key "abc" is not a SHA-256/],
    [
      'a key that is not the hash of its document',
      manifestOf('mismatch.json', JSON.stringify({ [`sha256:${documentHash('query B { __typename }')}`]: valid })),
      /is not the SHA-256 of its document/,
    ],
    [
      'a document that does not parse',
      manifestOf('text.json', JSON.stringify({ [documentHash('query {')]: 'query {' })),
      /is not GraphQL: Syntax Error/,
    ],
  ])('%s', (_case, file, problem) => {
    // Every start reads its configuration first (lib/main.ts configOrExit: exit 1 naming each problem).
    expect(() => loadConfig({ TRUSTED_DOCUMENTS: file })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUSTED_DOCUMENTS: file })).toThrow(problem);
  });

  it('accepts a good manifest', () => {
    const file = manifestOf('good.json', JSON.stringify({ [`sha256:${documentHash(valid)}`]: valid }));
    expect(loadConfig({ TRUSTED_DOCUMENTS: file }).trustedDocuments?.get(documentHash(valid))).toBe(valid);
  });
});
