import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readUntil, startLiveHarness, WEB_ORIGIN, WsClient, type LiveHarness } from './live-graph-harness.js';

const AUTH = { Authorization: 'Bearer someone' };
const TICKS = 'subscription Ticks($after: String) { ticks(after: $after) { n person { id name } } }';

/** The gateway's three subscription transports over one stream whose events name another subgraph's entity. */
describe('the live graph on the gateway', () => {
  let live: LiveHarness;

  beforeAll(async () => {
    live = await startLiveHarness({ GRAPHQL_MAX_DEPTH: '4' });
  });
  afterAll(async () => {
    await live?.gateway.close();
  });

  const publishSoon = (count = 1) =>
    setTimeout(() => {
      for (let i = 0; i < count; i += 1) live.feed.publish(`p${live.feed.ticks.length + 1}`);
    }, 300);

  describe('over WebSocket (graphql-transport-ws)', () => {
    it('delivers each event, completed by the subgraph that owns its entity', async () => {
      const client = await WsClient.connect(live.wsUrl, AUTH);
      client.subscribe('1', TICKS);
      publishSoon(2);
      await client.until(() => client.of('1').length >= 2);
      const [first, second] = client.of('1');
      expect(first).toEqual({
        id: '1',
        type: 'next',
        payload: { data: { ticks: expect.objectContaining({ n: expect.any(Number) }) } },
      });
      const person = (first.payload.data.ticks as { person: { id: string; name: string } }).person;
      expect(person.name).toBe(`Person ${person.id}`);
      expect(second.type).toBe('next');
      client.send({ id: '1', type: 'complete' });
      client.close();
    });

    it('takes credentials from connection_init whatever the case of their names, or from the upgrade', async () => {
      const lower = await WsClient.connect(live.wsUrl, { authorization: 'Bearer someone' });
      const upgrade = await WsClient.connect(live.wsUrl, {}, { authorization: 'Bearer someone' });
      for (const client of [lower, upgrade]) client.subscribe('1', TICKS);
      publishSoon();
      for (const client of [lower, upgrade]) {
        await client.until(() => client.of('1').length >= 1);
        expect(client.of('1')[0].type).toBe('next');
        expect(client.of('1')[0].payload.errors).toBeUndefined();
        client.close();
      }
    });

    it('ends a subscription refused at subscribe with its error and code', async () => {
      const anonymous = await WsClient.connect(live.wsUrl);
      anonymous.subscribe('1', TICKS);
      await anonymous.until(() => anonymous.of('1').some((message) => message.type === 'complete'));
      expect(anonymous.of('1')[0].payload.errors[0].extensions.code).toBe('UNAUTHENTICATED');

      const client = await WsClient.connect(live.wsUrl, AUTH);
      client.subscribe('2', 'subscription { ticks(owner: "elsewhere") { n } }');
      client.subscribe('3', 'subscription { ticks(after: "nope") { n } }');
      await client.until(() => ['2', '3'].every((id) => client.of(id).some((m) => m.type === 'complete')));
      expect(client.of('2')[0].payload.errors[0].extensions.code).toBe('FORBIDDEN');
      expect(client.of('3')[0].payload.errors[0].extensions).toEqual(
        expect.objectContaining({ code: 'BAD_USER_INPUT', errors: [expect.objectContaining({ field: 'after' })] }),
      );
      anonymous.close();
      client.close();
    });

    it('refuses a document over the depth limit, as a query would be', async () => {
      const client = await WsClient.connect(live.wsUrl, AUTH);
      client.subscribe('1', 'subscription { ticks { person { friend { friend { friend { name } } } } } }');
      await client.until(() => client.of('1').length > 0);
      expect(client.of('1')[0]).toEqual(
        expect.objectContaining({
          type: 'error',
          payload: [expect.objectContaining({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })],
        }),
      );
      client.close();
    });

    it('refuses an upgrade from an origin outside CORS_ORIGINS, and takes one from inside', async () => {
      await expect(WsClient.connect(live.wsUrl, AUTH, { origin: 'https://evil.test' })).rejects.toThrow(/403/);
      const allowed = await WsClient.connect(live.wsUrl, AUTH, { origin: WEB_ORIGIN });
      allowed.close();
    });

    it('refuses the 101st subscription of one connection with RATE_LIMITED', async () => {
      const client = await WsClient.connect(live.wsUrl, AUTH);
      for (let id = 1; id <= 101; id += 1) client.subscribe(String(id), TICKS);
      await client.until(() => client.of('101').length > 0);
      expect(client.of('101')[0]).toEqual(
        expect.objectContaining({
          type: 'error',
          payload: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'RATE_LIMITED' }) })],
        }),
      );
      expect(client.of('100')).toEqual([]);
      client.close();
    });
  });

  describe('over multipart HTTP (Apollo Client)', () => {
    it('answers a multipart stream: a heartbeat, then one part per event', async () => {
      const response = await fetch(live.url, {
        method: 'POST',
        headers: {
          ...AUTH,
          'content-type': 'application/json',
          accept: 'multipart/mixed;subscriptionSpec="1.0",application/json',
        },
        body: JSON.stringify({ query: TICKS }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";subscriptionSpec="1.0"');
      publishSoon();
      const text = await readUntil(response, (so) => so.includes('"payload"'));
      const parts = text
        .split('\r\n--graphql')
        .filter((part) => part.includes('Content-Type: application/json'))
        .map((part) => JSON.parse(part.split('\r\n\r\n')[1]) as Record<string, any>);
      expect(parts[0]).toEqual({});
      const payload = parts.find((part) => 'payload' in part)!.payload;
      expect(payload.data.ticks.person.name).toMatch(/^Person p/);
    });

    it('answers a refusal before the stream as a GraphQL error with its status', async () => {
      const response = await fetch(live.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'multipart/mixed;subscriptionSpec="1.0",application/json',
        },
        body: JSON.stringify({ query: 'subscription { nothing }' }),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as any).errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    });
  });

  describe('over SSE (graphql-sse, distinct connections)', () => {
    const sse = (headers: Record<string, string> = AUTH) =>
      fetch(live.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
        body: JSON.stringify({ query: TICKS }),
      });

    it('sends each event as `next` with its cursor as id, and resumes after Last-Event-ID', async () => {
      const response = await sse();
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      publishSoon(2);
      const text = await readUntil(response, (so) => (so.match(/event: next/g) ?? []).length >= 2);
      const ids = [...text.matchAll(/^id: (.+)$/gm)].map((match) => match[1]);
      expect(ids).toHaveLength(2);
      expect(text).toMatch(
        /event: next\ndata: \{"data":\{"ticks":\{"n":\d+,"person":\{"id":"p\d+","name":"Person p\d+"\}\}\}\}/,
      );

      // Reconnecting after the first: the second comes again, then what is new.
      const resumed = await sse({ ...AUTH, 'last-event-id': ids[0] });
      const again = await readUntil(resumed, (so) => /^id: /m.test(so));
      expect([...again.matchAll(/^id: (.+)$/gm)].map((match) => match[1])[0]).toBe(ids[1]);
    });

    it('ends a refused subscription with its error, then complete', async () => {
      const response = await sse({});
      const text = await readUntil(response, (so) => so.includes('event: complete'));
      expect(text).toMatch(/"code":"UNAUTHENTICATED"/);
    });
  });

  describe('what stays refused', () => {
    it('refuses @defer with its code, and a subscription asked for as one JSON answer', async () => {
      const post = (query: string) =>
        fetch(live.url, {
          method: 'POST',
          headers: { ...AUTH, 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        });
      const deferred = await post('query { tickCount ... @defer { tickCount } }');
      expect(deferred.status).toBe(400);
      expect(((await deferred.json()) as any).errors[0].extensions.code).toBe('DEFER_NOT_SUPPORTED');
      const single = await post(TICKS);
      expect(single.status).toBe(406);
      expect(((await single.json()) as any).errors[0].extensions.code).toBe('NOT_ACCEPTABLE');
    });
  });
});

describe('the live graph at shutdown', () => {
  it('ends every stream: WebSocket with 1012, multipart with its closing boundary, SSE by ending', async () => {
    const live = await startLiveHarness();
    const client = await WsClient.connect(live.wsUrl, AUTH);
    client.subscribe('1', TICKS);
    const multipart = await fetch(live.url, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json', accept: 'multipart/mixed;subscriptionSpec="1.0"' },
      body: JSON.stringify({ query: TICKS }),
    });
    const sse = await fetch(live.url, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: TICKS }),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const closing = live.gateway.close();
    const [multipartText, sseText] = await Promise.all([
      readUntil(multipart, () => false),
      readUntil(sse, () => false),
      client.until(() => client.closed !== undefined),
    ]);
    await closing;
    expect(client.closed?.code).toBe(1012);
    expect(multipartText.endsWith('\r\n--graphql--\r\n')).toBe(true);
    expect(sseText).not.toContain('event: complete');
  });
});
