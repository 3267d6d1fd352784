import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FORWARDED_HEADERS } from '#lib/rest/graphql-client.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { LogCollector } from '#test/support/logs.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { startHiveGateway, type HiveGateway } from '#test/support/hive-gateway.js';
import { linkIn, MailCatcher } from '#test/surveys/support.js';

const MAGIC_LINK_BASE = 'http://localhost:5173/auth/magic';
const subgraphUrlsOf = (platform: TestPlatform) => ({
  social: platform.subgraphs.social.url,
  surveys: platform.subgraphs.surveys.url,
  contacts: platform.subgraphs.contacts.url,
});

describe('Hive Gateway on the same supergraph', () => {
  let platform: TestPlatform;
  let hive: HiveGateway;
  const logs = new LogCollector();
  const mail = new MailCatcher();
  /** Every caller credential at once: a bearer JWT (contacts, social), a survey session cookie. */
  let signedIn: Record<string, string>;
  let apiKey: Record<string, string>;
  let contactId: string;
  let surveyId: string;
  let postId: string;

  beforeAll(async () => {
    await mail.start();
    platform = await startTestPlatform(
      {
        LOG_LEVEL: 'info',
        CONTACTS_AUTH: 'required',
        SMTP_URL: `smtp://127.0.0.1:${mail.port}`,
        MAGIC_LINK_BASE_URL: MAGIC_LINK_BASE,
      },
      { logStream: logs },
    );
    // Behind a proxy on this machine, as the Node gateway's limit test is (test/security/limits.test.ts).
    hive = await startHiveGateway(subgraphUrlsOf(platform), { TRUST_PROXY: 'loopback' });

    const bearer = { authorization: `Bearer ${await platform.token('hive-user', undefined, 'hive@venues.example')}` };
    const contact = await rest(
      'POST',
      `${platform.urls.contactsRest}/api/contacts`,
      { firstName: 'Hana', lastName: 'Hive', email: 'hana@venues.example' },
      bearer,
    );
    expect(contact.status).toBe(201);
    contactId = contact.body.id;

    expect(
      (await rest('POST', `${platform.urls.surveysRest}/api/auth/magic/request`, { email: 'hive@venues.example' }))
        .status,
    ).toBe(202);
    const token = linkIn(await mail.waitFor('hive@venues.example'), `${MAGIC_LINK_BASE}?`)!.searchParams.get('token');
    const session = await rest('POST', `${platform.urls.surveysRest}/api/auth/magic/verify`, { token });
    expect(session.status).toBe(200);
    const cookie = session.headers.get('set-cookie')!.split(';')[0];
    const survey = await rest(
      'POST',
      `${platform.urls.surveysRest}/api/surveys`,
      { venueName: 'Hive Hall', contactId },
      { cookie },
    );
    expect(survey.status).toBe(201);
    surveyId = survey.body.id;
    signedIn = { ...bearer, cookie };

    const node = platform.urls.gateway;
    await graphql(node, 'mutation { createBrand(input: { name: "Hive brand" }) { id } }', {}, bearer);
    const made = await graphql<any>(
      node,
      'mutation { createApiKey(input: { name: "hive", scopes: ["posts.read", "posts.write"] }) { key } }',
      {},
      bearer,
    );
    apiKey = { 'x-api-key': made.body.data.createApiKey.key };
    const post = await graphql<any>(
      node,
      'mutation { createPost(input: { content: "through either gateway" }) { id } }',
      {},
      apiKey,
    );
    postId = post.body.data.createPost.id;
  });
  afterAll(async () => {
    await hive?.stop();
    await platform?.stop();
    await mail.stop();
  });

  /** Runs one operation through both gateways and answers both bodies. */
  const throughBoth = async (query: string, variables: Record<string, unknown>, headers: Record<string, string>) => {
    const [node, other] = await Promise.all([
      graphql(platform.urls.gateway, query, variables, headers),
      graphql(hive.url, query, variables, headers),
    ]);
    return { node: node.body, hive: other.body, status: other.status };
  };

  it("runs urql's GET query from WEB_URL without a preflight header, and nothing a foreign page sends", async () => {
    const target = new URL(hive.url);
    target.searchParams.set('query', '{ surveyExportFormats }');
    const site = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' };
    const fromWeb = await fetch(target, {
      headers: { ...site, origin: new URL(MAGIC_LINK_BASE).origin, accept: 'application/graphql-response+json' },
    });
    expect(fromWeb.status).toBe(200);
    expect(((await fromWeb.json()) as { data: unknown }).data).toEqual({
      surveyExportFormats: expect.arrayContaining(['HTML']),
    });
    const forged = await fetch(hive.url, {
      method: 'POST',
      headers: { ...site, origin: 'https://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ surveyExportFormats }' }),
    });
    expect(forged.status).toBe(403);
    expect(await forged.json()).toEqual({ errors: [expect.objectContaining({ extensions: { code: 'FORBIDDEN' } })] });
  });

  it('forwards the headers lib/rest/graphql-client.ts forwards', () => {
    const config = readFileSync(path.join(PROJECT_ROOT, 'gateway.config.ts'), 'utf8');
    for (const header of FORWARDED_HEADERS) expect(config).toContain(`'${header}'`);
  });

  it('resolves Contact.surveys across subgraphs with the answer of the Node gateway', async () => {
    const query = 'query ($id: ID!) { contact(id: $id) { id firstName lastName surveys { id venueName status } } }';
    const answers = await throughBoth(query, { id: contactId }, signedIn);
    expect(answers.hive).toEqual(answers.node);
    expect(answers.hive.errors).toBeUndefined();
    expect(answers.hive.data).toEqual({
      contact: {
        id: contactId,
        firstName: 'Hana',
        lastName: 'Hive',
        surveys: [{ id: surveyId, venueName: 'Hive Hall', status: expect.any(String) }],
      },
    });
  });

  it('resolves Survey.contact across subgraphs with the answer of the Node gateway', async () => {
    const query = 'query ($id: ID!) { survey(id: $id) { id venueName contact { id firstName email } } }';
    const answers = await throughBoth(query, { id: surveyId }, signedIn);
    expect(answers.hive).toEqual(answers.node);
    expect(answers.hive.data).toEqual({
      survey: {
        id: surveyId,
        venueName: 'Hive Hall',
        contact: { id: contactId, firstName: 'Hana', email: 'hana@venues.example' },
      },
    });
  });

  it('answers one query of each service as the Node gateway does, each with the credential it reads', async () => {
    const social = await throughBoth(
      '{ posts(first: 5) { totalCount nodes { id content status } } viewer { userId via } }',
      {},
      apiKey,
    );
    expect(social.hive).toEqual(social.node);
    expect(social.hive.data).toEqual({
      posts: { totalCount: 1, nodes: [{ id: postId, content: 'through either gateway', status: 'DRAFT' }] },
      viewer: { userId: 'hive-user', via: 'api-key' },
    });

    const surveys = await throughBoth(
      '{ surveys(first: 5) { totalCount nodes { id venueName } } }',
      {},
      { cookie: signedIn.cookie },
    );
    expect(surveys.hive).toEqual(surveys.node);
    expect(surveys.hive.data).toEqual({
      surveys: { totalCount: 1, nodes: [{ id: surveyId, venueName: 'Hive Hall' }] },
    });

    const contacts = await throughBoth(
      '{ contacts(first: 5) { totalCount nodes { id email } } }',
      {},
      { authorization: signedIn.authorization },
    );
    expect(contacts.hive).toEqual(contacts.node);
    expect(contacts.hive.data).toEqual({
      contacts: { totalCount: 1, nodes: [{ id: contactId, email: 'hana@venues.example' }] },
    });
  });

  it('forwards no credential the caller did not send: anonymous is refused as by the Node gateway', async () => {
    const answers = await throughBoth('{ contacts(first: 1) { totalCount } }', {}, {});
    // Root fields are nullable: the refused one is null, with its error (partial answers).
    expect(answers.hive.data).toEqual({ contacts: null });
    expect(answers.node.data).toEqual({ contacts: null });
    expect(answers.hive.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    expect(answers.node.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('passes the caller’s X-Request-Id on to the subgraph', async () => {
    const requestId = `hive-${Date.now()}`;
    const response = await fetch(hive.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': requestId, authorization: signedIn.authorization },
      body: JSON.stringify({ query: '{ contacts(first: 1) { totalCount } }' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe(requestId);
    const seenBy = logs.lines.filter((line) => line.req?.id === requestId).map((line) => line.component);
    expect(seenBy).toEqual(['contacts-subgraph']);
  });

  it('counts sign-in mail per client as the Node gateway does: it sends the caller’s address on', async () => {
    const request = (count: number, from: number, address: string) =>
      fetch(hive.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
        body: JSON.stringify({
          query:
            `mutation ` +
            `{ ${Array.from(
              { length: count },
              (_, index) =>
                `m${index}: requestMagicLink(input: { email: "hive${from + index}@example.com" }) { accepted }`,
            ).join(' ')} ` +
            `}`,
        }),
      }).then((response) => response.json() as Promise<{ errors?: { extensions?: { code?: string } }[] }>);
    expect((await request(30, 0, '203.0.113.20')).errors).toBeUndefined();
    expect((await request(1, 100, '203.0.113.20')).errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    // Another client behind the same Hive Gateway has a count of its own.
    expect((await request(1, 200, '203.0.113.21')).errors).toBeUndefined();
  });

  it('streams contentEvents: a subscription to Hive Gateway gets the event of a post made meanwhile, from the social subgraph apart', async () => {
    const follow = 'subscription { contentEvents { type contentId post { id content } } }';
    const stream = await fetch(hive.url, {
      method: 'POST',
      headers: { ...apiKey, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: follow }),
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    // Hive subscribes to the subgraph once the stream is open; the post comes after that.
    const arrived = (async () => {
      while (!/^data: .*"contentEvents"/m.test(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const made = await graphql<any>(
      platform.urls.gateway,
      'mutation { createPost(input: { content: "followed through Hive" }) { id } }',
      {},
      apiKey,
    );
    const id = made.body.data.createPost.id as string;
    const deadline = setTimeout(() => void reader.cancel(), 15_000);
    await arrived;
    clearTimeout(deadline);
    await reader.cancel().catch(() => undefined);
    const data = text
      .split('\n')
      .filter((line) => line.startsWith('data: ') && line.includes('contentEvents'))
      .map((line) => JSON.parse(line.slice('data: '.length)) as unknown);
    expect(data).toEqual([
      { data: { contentEvents: { type: 'CREATED', contentId: id, post: { id, content: 'followed through Hive' } } } },
    ]);
  });

  it('runs only the documents of a TRUSTED_DOCUMENTS manifest, by documentId or APQ hash', async () => {
    const folder = mkdtempSync(path.join(os.tmpdir(), 'hive-trusted-'));
    const text = 'query Typename { __typename }';
    const id = `sha256:${createHash('sha256').update(text).digest('hex')}`;
    writeFileSync(path.join(folder, 'persisted-documents.json'), JSON.stringify({ [id]: text }));
    const safe = await startHiveGateway(subgraphUrlsOf(platform), {
      TRUSTED_DOCUMENTS: path.join(folder, 'persisted-documents.json'),
    });
    try {
      const send = async (body: unknown) => {
        const response = await fetch(safe.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return {
          status: response.status,
          body: (await response.json()) as {
            data?: unknown;
            errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
          },
        };
      };
      const byId = await send({ documentId: id });
      expect(byId).toEqual({ status: 200, body: { data: { __typename: 'Query' } } });
      const byHash = await send({ extensions: { persistedQuery: { version: 1, sha256Hash: id.slice(7) } } });
      expect(byHash.body).toEqual({ data: { __typename: 'Query' } });
      for (const refused of [{ documentId: `sha256:${'0'.repeat(64)}` }, { query: '{ __typename }' }]) {
        const answer = await send(refused);
        expect(answer.status).toBe(400);
        expect(answer.body.data ?? undefined).toBeUndefined();
        expect(answer.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
      }
    } finally {
      await safe.stop();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
