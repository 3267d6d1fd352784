import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { httpClient } from '#lib/rest/graphql-client.js';
import { createLogger } from '#lib/observability/logger.js';
import type { RunningPart } from '#lib/service.js';
import { startSocialRest } from '#rest-adapters/social/index.js';
import { EventStreamReader, type SentEvent } from '#test/support/event-stream.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

/**
 * `GET /api/content-ops/events` with `Accept: text/event-stream`: the audit events as server-sent
 * events, through the REST adapter's GraphQL client, in process and against a gateway deployed apart.
 */
describe('content-ops events as server-sent events', () => {
  let platform: TestPlatform;
  let base: string;
  let alice: Record<string, string>;
  let brandId: string;
  const opened: EventStreamReader[] = [];

  const stream = async (headers: Record<string, string>, query = '', at = base) => {
    const response = await fetch(`${at}/api/content-ops/events${query}`, {
      headers: { accept: 'text/event-stream', ...headers },
    });
    const reader = new EventStreamReader(response);
    opened.push(reader);
    return reader;
  };
  const createPost = async (content: string): Promise<string> => {
    const created = await rest('POST', `${base}/api/posts`, { brandId, content }, alice);
    expect(created.status).toBe(201);
    return created.body.id;
  };
  /** The events of the stream until one for each of `ids` arrived (other posts' events too). */
  const eventsUntil = async (reader: EventStreamReader, ids: string[]) => {
    const seen: SentEvent[] = [];
    while (!ids.every((id) => seen.some((event) => event.data.contentId === id))) {
      const event = await reader.next();
      if (event === 'ended') throw new Error(`the stream ended after ${JSON.stringify(seen)}`);
      seen.push(event);
    }
    return seen;
  };

  /** Reads what is left of a stream, up to its end. */
  const endOf = async (reader: EventStreamReader) => {
    for (;;) if ((await reader.next(5_000)) === 'ended') return 'ended';
  };

  beforeAll(async () => {
    platform = await startTestPlatform();
    base = platform.urls.socialRest;
    alice = { authorization: `Bearer ${await platform.token('stream-alice')}` };
    const brand = await rest('POST', `${base}/api/brands`, { name: 'Streams' }, alice);
    expect(brand.status).toBe(201);
    brandId = brand.body.id;
  });
  afterAll(async () => {
    for (const reader of opened) await reader.close();
    await platform?.stop();
  });

  it('delivers an event created after subscribing: id the cursor, event the type, data an item of the list', async () => {
    const reader = await stream(alice);
    expect(reader.response.status).toBe(200);
    expect(reader.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(reader.response.headers.get('cache-control')).toContain('no-store');
    const id = await createPost('streamed');
    const [event] = (await eventsUntil(reader, [id])).filter((one) => one.data.contentId === id);
    expect(event.event).toBe('created');
    expect(typeof event.id).toBe('string');
    const listed = await rest('GET', `${base}/api/content-ops/events?contentId=${id}`, undefined, alice);
    expect(listed.body.data).toEqual([event.data]);
    await reader.close();
  });

  it('resumes from Last-Event-ID: every later event, oldest first, none twice, none missing, then live', async () => {
    const first = await stream(alice);
    const ids = [await createPost('r1'), await createPost('r2'), await createPost('r3')];
    const seen = await eventsUntil(first, ids.slice(0, 1));
    await first.close();
    const resumeAfter = seen.find((event) => event.data.contentId === ids[0])!;
    const whileAway = await createPost('r4');

    const resumed = await stream({ ...alice, 'last-event-id': resumeAfter.id! });
    const replayed = await eventsUntil(resumed, [...ids.slice(1), whileAway]);
    const live = await createPost('r5');
    const after = await eventsUntil(resumed, [live]);
    const all = [...replayed, ...after].filter((event) => [...ids, whileAway, live].includes(event.data.contentId));
    expect(all.map((event) => event.data.contentId)).toEqual([ids[1], ids[2], whileAway, live]);
    const eventIds = [...replayed, ...after].map((event) => event.data.id);
    expect(new Set(eventIds).size).toBe(eventIds.length);
    expect(eventIds).not.toContain(resumeAfter.data.id);
    expect(await resumed.quietFor(300)).toBe(true);
    await resumed.close();
  });

  it('filters by contentId and type as the list does', async () => {
    const reader = await stream(alice, '?type=created');
    const id = await createPost('filtered');
    await rest('DELETE', `${base}/api/posts/${id}`, undefined, alice);
    const other = await createPost('after');
    const events = await eventsUntil(reader, [other]);
    expect(events.every((event) => event.event === 'created')).toBe(true);
    await reader.close();
    expect((await rest('GET', `${base}/api/content-ops/events?type=nope`, undefined, alice)).status).toBe(400);
    const badType = await fetch(`${base}/api/content-ops/events?type=nope`, {
      headers: { ...alice, accept: 'text/event-stream' },
    });
    expect(badType.status).toBe(400);
    expect(((await badType.json()) as { errors: unknown }).errors).toEqual([
      expect.objectContaining({ field: 'type' }),
    ]);
  });

  it('refuses without credentials with a 401 problem before streaming, and a Last-Event-ID that is no cursor with a 400', async () => {
    const anonymous = await fetch(`${base}/api/content-ops/events`, { headers: { accept: 'text/event-stream' } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toContain('application/problem+json');
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await anonymous.json()).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });

    const badCursor = await fetch(`${base}/api/content-ops/events`, {
      headers: { ...alice, accept: 'text/event-stream', 'last-event-id': 'not-a-cursor' },
    });
    expect(badCursor.status).toBe(400);
    expect(await badCursor.json()).toMatchObject({
      code: 'BAD_USER_INPUT',
      errors: [expect.objectContaining({ field: 'Last-Event-ID' })],
    });
  });

  it('answers JSON as before without Accept: text/event-stream', async () => {
    const id = await createPost('json');
    const listed = await rest('GET', `${base}/api/content-ops/events?contentId=${id}`, undefined, alice);
    expect(listed.status).toBe(200);
    expect(listed.headers.get('content-type')).toContain('application/json');
    expect(listed.body).toEqual({
      data: [expect.objectContaining({ contentId: id, type: 'created' })],
      nextCursor: null,
      total: 1,
    });
    expect((await rest('GET', `${base}/api/content-ops/events`, undefined, {})).status).toBe(401);
  });

  describe('against a gateway deployed apart (GATEWAY_URL)', () => {
    let apart: RunningPart;

    beforeAll(async () => {
      apart = await startSocialRest(
        { config: platform.config, logger: createLogger(platform.config) },
        { port: 0, client: httpClient(platform.urls.gateway, platform.config.env.SUBGRAPH_TOKEN[0]) },
      );
    });
    afterAll(() => apart?.close());

    it('streams over GraphQL over SSE, refuses before streaming, and ends at shutdown', async () => {
      const anonymous = await fetch(`${apart.url}/api/content-ops/events`, {
        headers: { accept: 'text/event-stream' },
      });
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toMatchObject({ code: 'UNAUTHENTICATED' });

      const reader = await stream(alice, '', apart.url);
      expect(reader.response.status).toBe(200);
      const id = await createPost('over http');
      const [event] = (await eventsUntil(reader, [id])).filter((one) => one.data.contentId === id);
      expect(event).toMatchObject({ event: 'created', data: { contentId: id, brandId, type: 'created' } });

      const resumed = await stream({ ...alice, 'last-event-id': event.id! }, '', apart.url);
      const next = await createPost('over http, resumed');
      const replayed = await eventsUntil(resumed, [next]);
      expect(replayed.map((one) => one.data.contentId)).not.toContain(id);

      await apart.close();
      expect(await endOf(reader)).toBe('ended');
      expect(await endOf(resumed)).toBe('ended');
    });
  });
});
