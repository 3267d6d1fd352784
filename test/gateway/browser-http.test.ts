import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FormattedExecutionResult } from 'graphql';
import { LocalDataSource } from '#gateway/local-data-source.js';
import { startGateway, type RunningGateway } from '#gateway/gateway.js';
import type { GatewayContext } from '#lib/rest/graphql-client.js';
import { createLogger } from '#lib/observability/logger.js';
import { SESSION_COOKIE, SESSION_COOKIE_EXTENSION, type SessionCookieChange } from '#lib/http/session-cookie.js';
import { LogCollector } from '#test/support/logs.js';
import { startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { linkIn, MailCatcher } from '#test/surveys/support.js';

const WEB = 'https://app.example';
const FOREIGN = 'https://evil.example';
const ALLOWED_DOMAIN = 'field.example';
const LINK_PREFIX = `${WEB}/auth/magic?`;
/** What urql 4/5 sends on a GET query by default (`preferGetMethod: 'within-url-limit'`): no preflight header. */
const URQL_ACCEPT =
  'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed';
/** pino's level number of `error`. */
const ERROR_LEVEL = 50;

interface Answer {
  status: number;
  body: FormattedExecutionResult & { errors?: Array<{ message: string; extensions?: Record<string, unknown> }> };
  headers: Headers;
  setCookies: string[];
}

async function send(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<Answer> {
  const response = await fetch(url, { redirect: 'manual', ...init });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : {},
    headers: response.headers,
    setCookies: response.headers.getSetCookie(),
  };
}

/** A JSON POST, as Apollo Client sends one; `headers` add the browser's Fetch Metadata and credentials. */
function post(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return send(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
}

/** A GET, as urql sends a query: the document and variables in the URL. */
function get(url: string, query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) {
  const target = new URL(url);
  target.searchParams.set('query', query);
  if (variables) target.searchParams.set('variables', JSON.stringify(variables));
  return send(target.toString(), { method: 'GET', headers: { accept: URQL_ACCEPT, ...headers } });
}

const fromWeb = { origin: WEB, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' };
const fromForeignPage = { origin: FOREIGN, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' };

const SURVEY_COUNT = 'query SurveyCount { surveys(first: 100) { nodes { id venueName } } }';
const CREATE_SURVEY = 'mutation Create($input: CreateSurveyInput!) { createSurvey(input: $input) { id } }';

describe.each([
  ['in the gateway process', false],
  ['over HTTP (SURVEYS_SUBGRAPH_URL)', true],
])('the gateway for browsers, surveys %s', (_where, surveysOverHttp) => {
  let platform: TestPlatform;
  let apart: RunningGateway | undefined;
  let gateway: string;
  const logs = new LogCollector();
  const mail = new MailCatcher();

  beforeAll(async () => {
    await mail.start();
    platform = await startTestPlatform(
      {
        LOG_LEVEL: 'info',
        CORS_ORIGINS: WEB,
        SMTP_URL: `smtp://127.0.0.1:${mail.port}`,
        ALLOWED_EMAIL_DOMAINS: ALLOWED_DOMAIN,
        MAGIC_LINK_BASE_URL: `${WEB}/auth/magic`,
      },
      { logStream: logs },
    );
    gateway = platform.urls.gateway;
    if (surveysOverHttp) {
      // A second gateway of the same platform that calls the surveys subgraph over its HTTP port.
      const { social, surveys, contacts } = platform.subgraphs;
      apart = await startGateway(
        { config: platform.config, logger: createLogger(platform.config, logs) },
        {
          port: 0,
          subgraphUrls: { social: social.url, surveys: surveys.url, contacts: contacts.url },
          localSubgraphs: { social: social.local, contacts: contacts.local },
        },
      );
      gateway = apart.url;
    }
  });

  afterAll(async () => {
    await apart?.close();
    await platform?.stop();
    await mail.stop();
  });

  /** Signs in through the gateway alone, as a GraphQL-only frontend does; answers the verify's answer. */
  async function signIn(email: string): Promise<Answer> {
    const nth = mail.mails.filter((m) => m.to.includes(email)).length + 1;
    const requested = await post(
      gateway,
      'mutation Ask($input: MagicLinkRequestInput!) { requestMagicLink(input: $input) { accepted } }',
      { input: { email } },
      fromWeb,
    );
    expect(requested.body.errors).toBeUndefined();
    const token = linkIn(await mail.waitFor(email, nth), LINK_PREFIX)!.searchParams.get('token');
    // The frontend selects no token: the cookie is set all the same.
    return post(
      gateway,
      'mutation Verify($input: MagicLinkVerifyInput!) { verifyMagicLink(input: $input) { user { email } expiresAt } }',
      { input: { token } },
      fromWeb,
    );
  }

  const cookieIn = (answer: Answer) => answer.setCookies.find((line) => line.startsWith(`${SESSION_COOKIE}=`));
  const asCookie = (setCookie: string) => setCookie.split(';')[0];

  it('sets the session cookie on verifyMagicLink, reads surveys with only it, and clears it on endSurveySession', async () => {
    const verified = await signIn(`ann@${ALLOWED_DOMAIN}`);
    expect(verified.status).toBe(200);
    expect(verified.body.errors).toBeUndefined();
    const setCookie = cookieIn(verified);
    expect(setCookie).toBeDefined();
    expect(verified.setCookies).toHaveLength(1);
    // The attributes of the REST verify's cookie (HTTP here: no Secure).
    expect(setCookie).toMatch(/; Path=\/(;|$)/);
    expect(setCookie).toMatch(/; HttpOnly(;|$)/);
    expect(setCookie).toMatch(/; SameSite=Lax(;|$)/);
    expect(setCookie).not.toMatch(/Secure/);
    const maxAge = Number(/Max-Age=(\d+)/.exec(setCookie!)?.[1]);
    expect(maxAge).toBeGreaterThan(0);
    // What the surveys subgraph stated for the gateway is not shown to the client.
    expect(JSON.stringify(verified.body)).not.toContain(SESSION_COOKIE_EXTENSION);

    const cookie = { ...fromWeb, cookie: asCookie(setCookie!) };
    const created = await post(gateway, CREATE_SURVEY, { input: { venueName: 'Cookie Hall' } }, cookie);
    expect(created.body.errors).toBeUndefined();
    const read = await get(gateway, SURVEY_COUNT, undefined, cookie);
    expect(read.status).toBe(200);
    expect((read.body.data as any).surveys.nodes).toEqual([
      { id: (created.body.data as any).createSurvey.id, venueName: 'Cookie Hall' },
    ]);

    const ended = await post(gateway, 'mutation End { endSurveySession }', {}, cookie);
    expect(ended.body).toEqual({ data: { endSurveySession: true } });
    const cleared = cookieIn(ended);
    expect(cleared).toMatch(new RegExp(`^${SESSION_COOKIE}=;`));
    expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect(cleared).toMatch(/; Path=\/(;|$)/);
    const after = await post(gateway, SURVEY_COUNT, {}, cookie);
    expect(after.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('sets no cookie when the link is refused', async () => {
    const refused = await post(
      gateway,
      'mutation Verify($input: MagicLinkVerifyInput!) { verifyMagicLink(input: $input) { expiresAt } }',
      { input: { token: 'x'.repeat(43) } },
      fromWeb,
    );
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(refused.setCookies).toEqual([]);
  });

  it.each([
    ['subscription { surveys { id } }', 'NOT_ACCEPTABLE'],
    ['query Deferred { contacts(first: 1) { totalCount ... @defer { nodes { id } } } }', 'DEFER_NOT_SUPPORTED'],
    ['query Streamed { contacts(first: 1) { nodes @stream(initialCount: 1) { id } } }', 'STREAM_NOT_SUPPORTED'],
  ])('refuses %s with a 4xx naming %s, and logs no error', async (query, code) => {
    const before = logs.lines.length;
    // urql's Accept names text/event-stream too, and a subscription asked for so is served as a stream:
    // the subscription's GET asks for JSON alone, as a client that wants one JSON answer does.
    const getHeaders = code === 'NOT_ACCEPTABLE' ? { ...fromWeb, accept: 'application/json' } : fromWeb;
    for (const answer of [await post(gateway, query, {}, fromWeb), await get(gateway, query, undefined, getHeaders)]) {
      // A subscription asked for as one JSON answer: 406, it is served as a stream (gateway/subscriptions/).
      expect(answer.status).toBe(code === 'NOT_ACCEPTABLE' ? 406 : 400);
      expect(answer.body.errors).toEqual([expect.objectContaining({ extensions: { code } })]);
      expect(answer.body.data).toBeUndefined();
    }
    expect(logs.lines.slice(before).filter((line) => line.level >= ERROR_LEVEL)).toEqual([]);
  });

  it('still runs a query that only has a field named like a subscription', async () => {
    const answer = await post(gateway, 'query Subscription { contacts(first: 1) { totalCount } }', {}, fromWeb);
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
  });

  it("runs urql's GET query from the allowed origin, without a preflight header", async () => {
    const answer = await get(
      gateway,
      'query Count($first: Int) { contacts(first: $first) { totalCount } }',
      {
        first: 1,
      },
      fromWeb,
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { contacts: { totalCount: expect.any(Number) } } });
    expect(answer.headers.get('access-control-allow-origin')).toBe(WEB);
  });

  it('never runs a mutation sent by GET (405)', async () => {
    const token = await platform.token('u-get', undefined, `get@${ALLOWED_DOMAIN}`);
    const answer = await get(
      gateway,
      'mutation { createContact(input: { firstName: "Get", lastName: "Mutation" }) { id } }',
      undefined,
      {
        ...fromWeb,
        authorization: `Bearer ${token}`,
      },
    );
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('POST');
    const found = await post(gateway, '{ contacts(first: 100) { nodes { firstName } } }', {}, fromWeb);
    expect(JSON.stringify(found.body)).not.toContain('"Get"');
  });

  it('runs nothing a foreign page makes the browser send: JSON POST, form POST, image GET', async () => {
    const contacts = async () => (await post(gateway, '{ contacts(first: 1) { totalCount } }', {}, fromWeb)).body.data;
    const before = await contacts();
    const mutation = 'mutation { createContact(input: { firstName: "Forged", lastName: "Request" }) { id } }';

    const json = await post(gateway, mutation, {}, fromForeignPage);
    const form = await send(gateway, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'cross-site',
        'sec-fetch-mode': 'navigate',
        origin: FOREIGN,
      },
      body: new URLSearchParams({ query: mutation }).toString(),
    });
    // An <img src> sends neither an Origin nor CORS.
    const image = await get(gateway, '{ contacts(first: 1) { nodes { id } } }', undefined, {
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'no-cors',
      'sec-fetch-dest': 'image',
    });
    for (const answer of [json, form, image]) {
      expect(answer.status).toBe(403);
      expect(answer.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(answer.body.data).toBeUndefined();
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    }
    expect(await contacts()).toEqual(before);
  });

  it.each([
    ['same-origin (the Sandbox on this port)', { 'sec-fetch-site': 'same-origin' }],
    ['same-site', { 'sec-fetch-site': 'same-site', origin: 'https://admin.app.example' }],
    ['typed by the user', { 'sec-fetch-site': 'none' }],
    ['the allowed origin', fromWeb],
    ['a client that is no browser (no Fetch Metadata)', {}],
  ])('runs a query and a GET query from %s', async (_from, headers: Record<string, string>) => {
    const query = '{ contacts(first: 1) { totalCount } }';
    for (const answer of [await post(gateway, query, {}, headers), await get(gateway, query, undefined, headers)]) {
      expect(answer.status).toBe(200);
      expect(answer.body.errors).toBeUndefined();
    }
  });

  it("refuses a foreign page's request on a subgraph's own port too", async () => {
    const subgraph = `${platform.subgraphs.contacts.url}`;
    const refused = await post(subgraph, '{ contactsHealth { ok } }', {}, fromForeignPage);
    expect(refused.status).toBe(403);
    const allowed = await post(subgraph, '{ __typename }', {}, {});
    expect(allowed.status).toBe(200);
  });
});

describe('the session cookie through the gateway', () => {
  /** A subgraph in process whose answers state a session cookie (what a subgraph other than surveys must not get set). */
  const stating = (change: SessionCookieChange) => ({
    execute: async () => ({ data: { ok: true }, extensions: { [SESSION_COOKIE_EXTENSION]: change, other: 1 } }),
    subscribe: () => {
      throw new Error('no subscription in these tests');
    },
  });
  const contextSeeing = (seen: SessionCookieChange[]): GatewayContext => ({
    forwardHeaders: {},
    requestId: 'r1',
    setSessionCookie: (change) => seen.push(change),
  });
  const process = (source: LocalDataSource, context: GatewayContext) =>
    source.process({ request: { query: '{ ok }' }, context } as never);
  const change = { token: 'abc', expiresAt: new Date(Date.now() + 60_000).toISOString() };

  it('is set from the surveys subgraph and stripped from its answer', async () => {
    const seen: SessionCookieChange[] = [];
    const answer = await process(new LocalDataSource(stating(change), true), contextSeeing(seen));
    expect(seen).toEqual([change]);
    expect(answer.extensions).toEqual({ other: 1 });
  });

  it('is never set from another subgraph, and stripped all the same', async () => {
    const seen: SessionCookieChange[] = [];
    const answer = await process(new LocalDataSource(stating(change), false), contextSeeing(seen));
    expect(seen).toEqual([]);
    expect(answer.extensions).toEqual({ other: 1 });
  });

  it('ignores a statement of another shape (no arbitrary cookie attributes)', async () => {
    const seen: SessionCookieChange[] = [];
    const odd = { ...change, domain: 'evil.example' } as unknown as SessionCookieChange;
    await process(new LocalDataSource(stating(odd), true), contextSeeing(seen));
    expect(seen).toEqual([]);
  });
});
