import 'reflect-metadata';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SocialReadinessDocument } from '#rest-adapters/social/operations.generated.js';
import { readiness } from '#lib/rest/health-routes.js';
import { Migration20261127000001PlatformNames } from '#subgraphs/social/migrations/Migration20261127000001PlatformNames.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

/**
 * The social REST contract driven over HTTP through the whole chain (adapter, gateway, subgraph,
 * PostgreSQL): posts, brands, content operations and their state machine, rollups, the audit log,
 * API keys on the wire, health, and the SQL statement counts of the lists.
 */
describe('social publishing REST', () => {
  let platform: TestPlatform;
  let base: string;
  let gateway: string;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  const statements: string[] = [];

  const sql = (text: string, params: unknown[] = []) =>
    platform.subgraphs.social.orm.em.fork().getConnection().execute(text, params);
  const post = (body: unknown, headers = alice) => rest('POST', `${base}/api/posts`, body, headers);
  const item = (id: string, headers = alice) => rest('GET', `${base}/api/content-ops/items/${id}`, undefined, headers);
  const act = (id: string, action: string, body?: unknown, headers = alice) =>
    rest('POST', `${base}/api/content-ops/items/${id}/${action}`, body, headers);
  const eventTypes = async (id: string) =>
    (await rest('GET', `${base}/api/content-ops/events?contentId=${id}`, undefined, alice)).body.data.map(
      (e: { type: string }) => e.type,
    );
  const countStatements = async (run: () => Promise<unknown>) => {
    statements.length = 0;
    await run();
    // MikroORM colours its log lines; strip the escapes before looking at the statement.
    return statements
      .map((s) => stripVTControlCharacters(s))
      .filter((s) => /\[query\] (select|insert|update|delete)\b/i.test(s)).length;
  };

  beforeAll(async () => {
    platform = await startTestPlatform(
      {},
      { onQuery: (service, text) => service === 'social' && statements.push(text) },
    );
    base = platform.urls.socialRest;
    gateway = platform.urls.gateway;
    alice = { authorization: `Bearer ${await platform.token('alice')}` };
    bob = { authorization: `Bearer ${await platform.token('bob')}` };
  });
  afterAll(async () => {
    await platform?.stop();
  });

  describe('health', () => {
    it('answers /healthz, /readyz and /health with every part named', async () => {
      expect((await rest('GET', `${base}/healthz`)).status).toBe(200);
      expect((await rest('GET', `${base}/readyz`)).status).toBe(200);
      const health = await rest('GET', `${base}/health`);
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'ok', checks: { database: 'ok', storage: 'ok' } });
    });

    it('is not ready when the subgraph does not answer, nor once shutdown began', async () => {
      const ready = readiness(platform.gateway.client, String(SocialReadinessDocument), 'socialHealth');
      expect(await ready.check()).toBe(true);
      ready.shutDown();
      expect(await ready.check()).toBe(false);
      const unreachable = readiness(
        {
          execute: async () => {
            throw new Error('connection refused');
          },
        },
        String(SocialReadinessDocument),
        'socialHealth',
      );
      expect(await unreachable.check()).toBe(false);
    });

    it('answers 503 naming the failing part', async () => {
      const runtime = platform.subgraphs.social.runtime;
      const failing = {
        name: 'job queue',
        check: async () => {
          throw new Error('connection refused');
        },
      };
      runtime.healthChecks.push(failing);
      try {
        const health = await rest('GET', `${base}/health`);
        expect(health.status).toBe(503);
        expect(health.headers.get('content-type')).toContain('application/problem+json');
        expect(health.body.failing).toEqual(['job queue']);
        expect(health.body.detail).toContain('job queue');
        expect(JSON.stringify(health.body)).not.toContain('connection refused');
      } finally {
        runtime.healthChecks.splice(runtime.healthChecks.indexOf(failing), 1);
      }
    });
  });

  describe('posts', () => {
    it('creates a first post in a brand made for the user, and reads, updates and deletes it', async () => {
      const created = await post({ content: 'Hello world', platforms: ['mastodon', 'X'] });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        content: 'Hello world',
        platforms: ['mastodon', 'x'],
        mediaIds: [],
        scheduledAt: null,
        status: 'draft',
      });
      expect(Object.keys(created.body)).toEqual(
        expect.arrayContaining([
          'id',
          'brandId',
          'content',
          'platforms',
          'mediaIds',
          'scheduledAt',
          'status',
          'createdAt',
          'updatedAt',
        ]),
      );
      const brands = await rest('GET', `${base}/api/brands`, undefined, alice);
      expect(brands.body).toMatchObject({ page: 1, total: 1 });
      expect(created.body.brandId).toBe(brands.body.data[0].id);

      const id = created.body.id;
      expect((await rest('GET', `${base}/api/posts/${id}`, undefined, alice)).body.content).toBe('Hello world');
      const updated = await rest('PUT', `${base}/api/posts/${id}`, { ...created.body, content: 'Hello again' }, alice);
      expect(updated.status).toBe(200);
      expect(updated.body.content).toBe('Hello again');
      expect(new Date(updated.body.updatedAt).getTime()).toBeGreaterThan(new Date(created.body.updatedAt).getTime());

      // Sending the post back unchanged is no change: no event, same updatedAt.
      const unchanged = await rest('PUT', `${base}/api/posts/${id}`, updated.body, alice);
      expect(unchanged.body.updatedAt).toBe(updated.body.updatedAt);

      const deleted = await rest('DELETE', `${base}/api/posts/${id}`, undefined, alice);
      expect(deleted.status).toBe(204);
      expect(deleted.body).toBeUndefined();
      expect((await rest('GET', `${base}/api/posts/${id}`, undefined, alice)).status).toBe(404);
      expect((await rest('DELETE', `${base}/api/posts/${id}`, undefined, alice)).status).toBe(404);
      // The audit log keeps the item's history after it is gone.
      expect(await eventTypes(id)).toEqual(['deleted', 'updated', 'created']);
    });

    it('creates suggested and scheduled posts; a post with scheduledAt and no status is queued', async () => {
      const queued = await post({ content: 'Launch', scheduledAt: '2031-05-01T09:00:00+02:00' });
      expect(queued.body).toMatchObject({ status: 'queued', scheduledAt: '2031-05-01T07:00:00.000Z' });
      const suggested = await post({ content: 'Idea', status: 'suggested' });
      expect(suggested.body.status).toBe('suggested');
      const draftWithTime = await post({ content: 'Later', status: 'draft', scheduledAt: '2031-05-02T09:00:00Z' });
      expect(draftWithTime.body).toMatchObject({ status: 'draft', scheduledAt: '2031-05-02T09:00:00.000Z' });
    });

    it('answers 400 naming the field, and writes nothing', async () => {
      const before = (await rest('GET', `${base}/api/posts?limit=100`, undefined, alice)).body.total;
      const cases: Array<[unknown, string]> = [
        [{}, 'content'],
        [{ content: '   ' }, 'content'],
        [{ content: 'x', status: 'published' }, 'status'],
        [{ content: 'x', status: 'nonsense' }, 'status'],
        [{ content: 'x', scheduledAt: 'tomorrow' }, 'scheduledAt'],
        [{ content: 'x', scheduledAt: '2031-05-01T09:00:00' }, 'scheduledAt'],
        [{ content: 'x', status: 'queued' }, 'scheduledAt'],
        [{ content: 'x', mediaIds: ['not-an-id'] }, 'mediaIds'],
        [{ content: 'x', platforms: ['not a platform!'] }, 'platforms'],
        [{ content: 'x', brandId: '00000000-0000-4000-8000-000000000000' }, 'brandId'],
        [{ content: 123 }, 'content'],
        [{ content: 'x'.repeat(10_001) }, 'content'],
      ];
      for (const [body, field] of cases) {
        const res = await post(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      }
      const notJson = await rest('POST', `${base}/api/posts`, 'content=x', {
        ...alice,
        'content-type': 'application/json',
      });
      expect(notJson.status).toBe(400);
      expect((await rest('GET', `${base}/api/posts?limit=100`, undefined, alice)).body.total).toBe(before);
    });

    it('reads platform names in any case and with spaces around, one of each, and answers lower-case words', async () => {
      const kim = { authorization: `Bearer ${await platform.token('kim')}` };
      const created = await post(
        { content: 'everywhere', platforms: [' Mastodon ', 'X', 'mastodon', 'LinkedIn', 'google_business', 'twitter'] },
        kim,
      );
      expect(created.status).toBe(201);
      const words = ['mastodon', 'x', 'linkedin', 'google_business', 'twitter'];
      expect(created.body.platforms).toEqual(words);
      // Stored as the words they always were (the graph names them MASTODON, GOOGLE_BUSINESS...).
      expect((await sql('select platforms from social.post where id = ?', [created.body.id]))[0].platforms).toEqual(
        words,
      );
      const id = created.body.id;
      expect((await rest('GET', `${base}/api/posts/${id}`, undefined, kim)).body.platforms).toEqual(words);
      expect((await rest('GET', `${base}/api/posts`, undefined, kim)).body.data[0].platforms).toEqual(words);
      const updated = await rest('PUT', `${base}/api/posts/${id}`, { platforms: ['Mastodon', 'mastodon'] }, kim);
      expect([updated.status, updated.body.platforms]).toEqual([200, ['mastodon']]);
      const edited = await rest('PATCH', `${base}/api/content-ops/items/${id}`, { platforms: [' BlueSky', 'x '] }, kim);
      expect([edited.status, edited.body.platforms]).toEqual([200, ['bluesky', 'x']]);
      expect((await item(id, kim)).body.platforms).toEqual(['bluesky', 'x']);

      const queued = await post(
        { content: 'queued', platforms: ['Threads'], scheduledAt: '2036-02-01T09:00:00Z' },
        kim,
      );
      const queue = await rest('GET', `${base}/api/content-ops/queue`, undefined, kim);
      expect(queue.body.data.find((entry: { id: string }) => entry.id === queued.body.id).platforms).toEqual([
        'threads',
      ]);
      // The rollups count by the stored words, keys of a JSON map.
      const daily = await rest('GET', `${base}/api/content-ops/daily?from=2036-02-01&to=2036-02-01`, undefined, kim);
      expect(daily.body.days[0].byPlatform).toEqual({ threads: 1 });
    });

    it('refuses a name of no platform with a 400 on platforms naming it, and writes nothing', async () => {
      const lee = { authorization: `Bearer ${await platform.token('lee')}` };
      const kept = (await post({ content: 'kept', platforms: ['x'] }, lee)).body;
      const cases: Array<[string[], string]> = [
        [['linkedin!'], 'linkedin!'],
        [['mastodon', ' MySpace '], 'myspace'],
        // An enum value cannot hold a hyphen: the word with the underscore is the platform.
        [['google-business'], 'google-business'],
        // The first three, each once.
        [['friendster', 'Friendster', 'orkut', 'vine', 'jaiku'], 'friendster, orkut, vine'],
      ];
      for (const [platforms, named] of cases) {
        const expected = [{ field: 'platforms', message: `contains names that are not platforms: ${named}` }];
        const created = await post({ content: 'nowhere', platforms }, lee);
        expect([created.status, created.body.errors]).toEqual([400, expected]);
        expect(created.headers.get('content-type')).toContain('application/problem+json');
        const updated = await rest('PUT', `${base}/api/posts/${kept.id}`, { platforms }, lee);
        expect([updated.status, updated.body.errors]).toEqual([400, expected]);
        const edited = await rest('PATCH', `${base}/api/content-ops/items/${kept.id}`, { platforms }, lee);
        expect([edited.status, edited.body.errors]).toEqual([400, expected]);
      }
      const page = (await rest('GET', `${base}/api/posts`, undefined, lee)).body;
      expect([page.total, page.data[0].platforms, page.data[0].updatedAt]).toEqual([1, ['x'], kept.updatedAt]);
    });

    it('reads a post saved before platforms were an enum once the migration set names outside it aside', async () => {
      const max = { authorization: `Bearer ${await platform.token('max')}` };
      const saved = (await post({ content: 'legacy', platforms: ['mastodon'] }, max)).body;
      await sql(
        `update social.post set platforms = array['myspace', 'google-business', 'mastodon', 'myspace'] where id = ?`,
        [saved.id],
      );
      await sql(
        `insert into social.publish_attempt (id, post_id, platform, status, error, attempted_at, finished_at)
         values (gen_random_uuid(), ?, 'myspace', 'failed', 'no myspace account is connected', now(), now())`,
        [saved.id],
      );
      const orm = platform.subgraphs.social.orm;
      const migration = new Migration20261127000001PlatformNames(orm.em.getDriver(), orm.config);
      migration.up();
      await orm.em.fork().transactional(async (tx) => {
        const connection = tx.getConnection();
        const context = tx.getTransactionContext();
        await connection.execute('set local search_path to social', [], 'run', context);
        for (const query of migration.getQueries()) await connection.execute(query, [], 'run', context);
      });
      const detail = await item(saved.id, max);
      expect(detail.status).toBe(200);
      expect(detail.body.platforms).toEqual(['google_business', 'mastodon']);
      expect(detail.body.attempts).toEqual([]);
      // Set aside, not deleted: the names and the attempts are still in the database.
      expect(await sql('select platforms_outside_enum as names from social.post where id = ?', [saved.id])).toEqual([
        { names: ['myspace'] },
      ]);
      expect(
        await sql('select platform from social.publish_attempt_outside_enum where post_id = ?', [saved.id]),
      ).toEqual([{ platform: 'myspace' }]);
    });

    it('makes one default brand even when first posts arrive together', async () => {
      const judy = { authorization: `Bearer ${await platform.token('judy')}` };
      const results = await Promise.all([1, 2, 3, 4, 5].map((i) => post({ content: `together ${i}` }, judy)));
      expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
      expect(new Set(results.map((r) => r.body.brandId)).size).toBe(1);
      expect((await rest('GET', `${base}/api/brands`, undefined, judy)).body.total).toBe(1);
    });

    it('needs brandId once the user has several brands', async () => {
      const carol = { authorization: `Bearer ${await platform.token('carol')}` };
      const first = await rest('POST', `${base}/api/brands`, { name: 'Bakery' }, carol);
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ name: 'Bakery' });
      expect((await post({ content: 'only brand' }, carol)).body.brandId).toBe(first.body.id);
      const second = await rest('POST', `${base}/api/brands`, { name: 'Café' }, carol);
      const missing = await post({ content: 'which brand?' }, carol);
      expect(missing.status).toBe(400);
      expect(missing.body.errors[0].field).toBe('brandId');
      expect((await post({ content: 'this one', brandId: second.body.id }, carol)).body.brandId).toBe(second.body.id);
      expect((await rest('POST', `${base}/api/brands`, {}, carol)).body.errors[0].field).toBe('name');
      // Another user's brand is not a brand of yours, and is not listed.
      expect((await post({ content: 'x', brandId: second.body.id }, bob)).status).toBe(400);
      const bobsBrands = (await rest('GET', `${base}/api/brands`, undefined, bob)).body.data.map(
        (brand: { id: string }) => brand.id,
      );
      expect(bobsBrands).not.toContain(first.body.id);
      expect(bobsBrands).not.toContain(second.body.id);
    });

    it('answers 401 without valid credentials and 403 without the scope', async () => {
      expect((await rest('GET', `${base}/api/posts`)).status).toBe(401);
      expect((await post({ content: 'x' }, {})).status).toBe(401);
      expect((await rest('GET', `${base}/api/posts`, undefined, { authorization: 'Bearer not.a.token' })).status).toBe(
        401,
      );
      expect((await rest('GET', `${base}/api/brands`)).status).toBe(401);
      const readOnly = { authorization: `Bearer ${await platform.token('alice', ['posts.read'])}` };
      expect((await rest('GET', `${base}/api/posts`, undefined, readOnly)).status).toBe(200);
      const denied = await post({ content: 'x' }, readOnly);
      expect(denied.status).toBe(403);
      expect(denied.body.detail).toContain('posts.write');
    });

    it('answers 404 for unknown, malformed and other users’ posts', async () => {
      const mine = await post({ content: 'private' });
      for (const id of ['00000000-0000-4000-8000-000000000000', 'nope', "1' or '1'='1"]) {
        expect((await rest('GET', `${base}/api/posts/${encodeURIComponent(id)}`, undefined, alice)).status).toBe(404);
      }
      expect((await rest('GET', `${base}/api/posts/${mine.body.id}`, undefined, bob)).status).toBe(404);
      expect((await rest('PUT', `${base}/api/posts/${mine.body.id}`, { content: 'mine now' }, bob)).status).toBe(404);
      expect((await rest('DELETE', `${base}/api/posts/${mine.body.id}`, undefined, bob)).status).toBe(404);
      expect((await item(mine.body.id, bob)).status).toBe(404);
      expect(
        (await rest('GET', `${base}/api/posts`, undefined, bob)).body.data.map((p: { id: string }) => p.id),
      ).not.toContain(mine.body.id);
    });

    it('pages newest first and filters by status', async () => {
      const dave = { authorization: `Bearer ${await platform.token('dave')}` };
      for (let i = 0; i < 5; i++) await post({ content: `post ${i}`, status: i % 2 ? 'suggested' : 'draft' }, dave);
      const page = await rest('GET', `${base}/api/posts?limit=2&page=2`, undefined, dave);
      expect(page.body).toMatchObject({ page: 2, limit: 2, total: 5 });
      expect(page.body.data.map((p: { content: string }) => p.content)).toEqual(['post 2', 'post 1']);
      expect((await rest('GET', `${base}/api/posts?status=suggested`, undefined, dave)).body.total).toBe(2);
      expect((await rest('GET', `${base}/api/posts?limit=101`, undefined, dave)).status).toBe(400);
      expect((await rest('GET', `${base}/api/posts?status=bogus`, undefined, dave)).status).toBe(400);
    });

    it('carries enum values in lower case in REST and in UPPER_CASE in the graph, written from either side', async () => {
      const carol = { authorization: `Bearer ${await platform.token('carol-enums')}` };
      const fromRest = await post({ content: 'written over REST', status: 'suggested' }, carol);
      expect(fromRest.body.status).toBe('suggested');
      const ITEM = 'query ($id: ID!) { contentItem(id: $id) { status events { type actor { type } } } }';
      expect((await graphql<any>(gateway, ITEM, { id: fromRest.body.id }, carol)).body.data.contentItem).toEqual({
        status: 'SUGGESTED',
        events: [{ type: 'CREATED', actor: { type: 'USER' } }],
      });

      const fromGraph = await graphql<any>(
        gateway,
        'mutation ($input: CreatePostInput!) { createPost(input: $input) { id status } }',
        { input: { content: 'written over GraphQL', status: 'SUGGESTED' } },
        carol,
      );
      const { id, status } = fromGraph.body.data.createPost;
      expect(status).toBe('SUGGESTED');
      expect((await rest('GET', `${base}/api/posts/${id}`, undefined, carol)).body.status).toBe('suggested');
      const suggested = await rest('GET', `${base}/api/posts?status=suggested`, undefined, carol);
      expect(suggested.body.data.map((p: { id: string }) => p.id).sort()).toEqual([fromRest.body.id, id].sort());
      const events = await rest('GET', `${base}/api/content-ops/events?type=created&contentId=${id}`, undefined, carol);
      expect(events.body.data.map((e: { type: string; actor: { type: string } }) => [e.type, e.actor.type])).toEqual([
        ['created', 'user'],
      ]);
      // A value in the graph's case is no REST word: refused as before, naming the parameter.
      const upper = await rest('GET', `${base}/api/posts?status=Suggested`, undefined, carol);
      expect([upper.status, upper.body.errors?.[0]?.field]).toEqual([400, 'status']);
    });
  });

  describe('content operations', () => {
    it('moves items through the state machine and answers 409 naming the current state', async () => {
      const draft = (await post({ content: 'draft' })).body;
      const edited = await rest(
        'PATCH',
        `${base}/api/content-ops/items/${draft.id}`,
        { content: 'edited draft', platforms: ['mastodon'] },
        alice,
      );
      expect(edited.status).toBe(200);
      expect(edited.body).toMatchObject({ content: 'edited draft', status: 'draft', contentId: draft.id });
      for (const action of ['approve', 'reject', 'retry']) {
        const res = await act(draft.id, action);
        expect(res.status).toBe(409);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(res.body.currentState).toBe('draft');
        expect(res.body.detail).toContain('draft');
      }
      const rescheduleDraft = await act(draft.id, 'reschedule', { scheduledAt: '2032-01-01T00:00:00Z' });
      expect(rescheduleDraft.body).toMatchObject({ status: 409, currentState: 'draft' });

      const timed = (
        await post({ content: 'timed suggestion', status: 'suggested', scheduledAt: '2032-02-01T12:00:00Z' })
      ).body;
      const untimed = (await post({ content: 'untimed suggestion', status: 'suggested' })).body;
      const toReject = (await post({ content: 'bad suggestion', status: 'suggested' })).body;
      expect(
        (await rest('PATCH', `${base}/api/content-ops/items/${untimed.id}`, { content: 'better words' }, alice)).body
          .status,
      ).toBe('suggested');
      expect((await act(timed.id, 'approve')).body.status).toBe('queued');
      expect((await act(untimed.id, 'approve')).body.status).toBe('draft');
      const approvedTwice = await act(timed.id, 'approve');
      expect(approvedTwice.status).toBe(409);
      expect(approvedTwice.body.currentState).toBe('queued');
      expect((await act(toReject.id, 'reject')).body.status).toBe('rejected');
      expect(
        (await rest('PATCH', `${base}/api/content-ops/items/${toReject.id}`, { content: 'x' }, alice)).body
          .currentState,
      ).toBe('rejected');

      // Queued: reschedule to a future time only; a queued post is no longer a draft to edit.
      expect(
        (await rest('PATCH', `${base}/api/content-ops/items/${timed.id}`, { content: 'x' }, alice)).body.currentState,
      ).toBe('queued');
      const past = await act(timed.id, 'reschedule', { scheduledAt: '2020-01-01T00:00:00Z' });
      expect(past.status).toBe(400);
      expect(past.body.errors[0].field).toBe('scheduledAt');
      expect((await act(timed.id, 'reschedule', {})).body.errors[0].field).toBe('scheduledAt');
      const moved = await act(timed.id, 'reschedule', { scheduledAt: '2033-03-03T03:03:03Z' });
      expect(moved.body).toMatchObject({ status: 'queued', scheduledAt: '2033-03-03T03:03:03.000Z' });
      expect((await act(timed.id, 'retry')).body.currentState).toBe('queued');

      // Failed (as the publisher leaves it): retry queues it due now; reschedule queues it later.
      await sql(`update social.post set status = 'failed' where id = ?`, [timed.id]);
      const retried = await act(timed.id, 'retry');
      expect(retried.body.status).toBe('queued');
      expect(Math.abs(new Date(retried.body.scheduledAt).getTime() - Date.now())).toBeLessThan(60_000);
      await sql(`update social.post set status = 'failed' where id = ?`, [timed.id]);
      expect((await act(timed.id, 'reschedule', { scheduledAt: '2034-01-01T00:00:00Z' })).body.status).toBe('queued');

      // Publishing: nothing may change it under the publisher.
      await sql(`update social.post set status = 'publishing' where id = ?`, [timed.id]);
      expect((await rest('PUT', `${base}/api/posts/${timed.id}`, { content: 'x' }, alice)).body.currentState).toBe(
        'publishing',
      );
      expect((await rest('DELETE', `${base}/api/posts/${timed.id}`, undefined, alice)).status).toBe(409);

      expect(await eventTypes(timed.id)).toEqual(['rescheduled', 'retried', 'rescheduled', 'approved', 'created']);
      expect((await act('00000000-0000-4000-8000-000000000000', 'approve')).status).toBe(404);
      expect((await rest('PATCH', `${base}/api/content-ops/items/not-an-id`, { content: 'x' }, alice)).status).toBe(
        404,
      );
      expect((await rest('PATCH', `${base}/api/content-ops/items/${draft.id}`, { content: '' }, alice)).status).toBe(
        400,
      );
    });

    it('shows an item with its events (before and after, actor) and publish attempts', async () => {
      const created = (await post({ content: 'detail', status: 'suggested', platforms: ['mastodon'] })).body;
      await act(created.id, 'reject');
      await sql(
        `insert into social.publish_attempt (id, post_id, platform, status, error, attempted_at, finished_at)
         values (gen_random_uuid(), ?, 'mastodon', 'failed', 'rate limited', now(), now())`,
        [created.id],
      );
      const detail = await item(created.id);
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({
        id: created.id,
        contentId: created.id,
        status: 'rejected',
        content: 'detail',
      });
      expect(detail.body.events).toHaveLength(2);
      expect(detail.body.events[0]).toMatchObject({
        type: 'rejected',
        contentId: created.id,
        actor: { type: 'user', id: 'alice' },
        before: { status: 'suggested' },
        after: { status: 'rejected' },
      });
      expect(detail.body.events[1]).toMatchObject({ type: 'created', before: null, after: { content: 'detail' } });
      expect(detail.body.publishAttempts).toEqual([
        expect.objectContaining({ platform: 'mastodon', status: 'failed', error: 'rate limited' }),
      ]);
    });

    it('lists the queue in due order, filterable by status and brand', async () => {
      const erin = { authorization: `Bearer ${await platform.token('erin')}` };
      const brandA = (await rest('POST', `${base}/api/brands`, { name: 'A' }, erin)).body.id;
      const brandB = (await rest('POST', `${base}/api/brands`, { name: 'B' }, erin)).body.id;
      const later = (await post({ brandId: brandA, content: 'later', scheduledAt: '2035-01-02T00:00:00Z' }, erin)).body;
      const sooner = (await post({ brandId: brandB, content: 'sooner', scheduledAt: '2035-01-01T00:00:00Z' }, erin))
        .body;
      const draft = (await post({ brandId: brandA, content: 'draft' }, erin)).body;
      const queue = await rest('GET', `${base}/api/content-ops/queue`, undefined, erin);
      expect(queue.status).toBe(200);
      expect(queue.body).toMatchObject({ page: 1, total: 2 });
      expect(queue.body.data.map((i: { id: string }) => i.id)).toEqual([sooner.id, later.id]);
      expect(queue.body.data[0]).toMatchObject({ contentId: sooner.id, status: 'queued' });
      const withDrafts = await rest('GET', `${base}/api/content-ops/queue?status=queued,draft`, undefined, erin);
      expect(withDrafts.body.data.map((i: { id: string }) => i.id)).toEqual([sooner.id, later.id, draft.id]);
      const brandOnly = await rest('GET', `${base}/api/content-ops/queue?brandId=${brandA}`, undefined, erin);
      expect(brandOnly.body.data.map((i: { id: string }) => i.id)).toEqual([later.id]);
      expect((await rest('GET', `${base}/api/content-ops/queue?status=nope`, undefined, erin)).status).toBe(400);
      expect((await rest('GET', `${base}/api/content-ops/queue`)).status).toBe(401);
    });

    it('pages the audit log newest first with cursors, filtered by item and type', async () => {
      const frank = { authorization: `Bearer ${await platform.token('frank')}` };
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await post({ content: `e${i}`, status: 'suggested' }, frank)).body.id);
      await act(ids[0], 'approve', undefined, frank);
      await act(ids[1], 'reject', undefined, frank);
      const seen: Array<{ id: string; type: string; contentId: string }> = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `limit=3&cursor=${cursor}` : 'limit=3';
        const page = await rest('GET', `${base}/api/content-ops/events?${query}`, undefined, frank);
        expect(page.status).toBe(200);
        expect(page.body.total).toBe(7);
        seen.push(...page.body.data);
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen).toHaveLength(7);
      expect(new Set(seen.map((e) => e.id)).size).toBe(7);
      expect(seen.map((e) => e.type)).toEqual([
        'rejected',
        'approved',
        'created',
        'created',
        'created',
        'created',
        'created',
      ]);
      expect(seen.map((e) => e.contentId).slice(2)).toEqual([...ids].reverse());
      const approvals = await rest('GET', `${base}/api/content-ops/events?type=approved`, undefined, frank);
      expect(approvals.body.data.map((e: { contentId: string }) => e.contentId)).toEqual([ids[0]]);
      expect((await rest('GET', `${base}/api/content-ops/events?type=nope`, undefined, frank)).status).toBe(400);
      // The problem names the parameter the client sent, not the operation's variable it fills.
      const garbage = await rest('GET', `${base}/api/content-ops/events?cursor=garbage`, undefined, frank);
      expect(garbage.status).toBe(400);
      expect(garbage.body.errors).toEqual([{ field: 'cursor', message: 'is not a cursor of this list' }]);
      // Nobody else's events show up.
      expect(
        (await rest('GET', `${base}/api/content-ops/events?contentId=${ids[0]}`, undefined, bob)).body.data,
      ).toEqual([]);
    });

    it('rolls up every day of the range in the asked time zone, byte for byte the same each time', async () => {
      const grace = { authorization: `Bearer ${await platform.token('grace')}` };
      // 23:30 UTC on 10 March is already 11 March in Tokyo and still 10 March in Los Angeles.
      await post({ content: 'late', platforms: ['mastodon', 'x'], scheduledAt: '2030-03-10T23:30:00Z' }, grace);
      await post(
        { content: 'noon', platforms: ['x'], status: 'suggested', scheduledAt: '2030-03-10T12:00:00Z' },
        grace,
      );
      await post({ content: 'elsewhere', scheduledAt: '2030-04-01T12:00:00Z' }, grace);
      const daily = async (query: string) => {
        const response = await fetch(`${base}/api/content-ops/daily?${query}`, { headers: grace });
        return { status: response.status, text: await response.text() };
      };
      const utc = await daily('from=2030-03-09&to=2030-03-12');
      expect(utc.status).toBe(200);
      const body = JSON.parse(utc.text);
      expect(body.timezone).toBe('UTC');
      expect(body.days.map((d: { date: string }) => d.date)).toEqual([
        '2030-03-09',
        '2030-03-10',
        '2030-03-11',
        '2030-03-12',
      ]);
      expect(body.days[0]).toEqual({
        date: '2030-03-09',
        total: 0,
        byStatus: { draft: 0, failed: 0, published: 0, publishing: 0, queued: 0, rejected: 0, suggested: 0 },
        byPlatform: { mastodon: 0, x: 0 },
      });
      expect(body.days[1]).toMatchObject({
        total: 2,
        byStatus: { queued: 1, suggested: 1 },
        byPlatform: { mastodon: 1, x: 2 },
      });
      expect((await daily('from=2030-03-09&to=2030-03-12')).text).toBe(utc.text);

      const tokyo = JSON.parse((await daily('from=2030-03-10&to=2030-03-11&timezone=Asia/Tokyo')).text);
      expect(tokyo.timezone).toBe('Asia/Tokyo');
      expect(tokyo.days.map((d: { total: number }) => d.total)).toEqual([1, 1]);
      expect(tokyo.days[1].byStatus.queued).toBe(1);
      const losAngeles = JSON.parse((await daily('from=2030-03-10&to=2030-03-11&timezone=America/Los_Angeles')).text);
      expect(losAngeles.days.map((d: { total: number }) => d.total)).toEqual([2, 0]);

      for (const [query, field] of [
        ['from=2030-03-10&to=2030-03-11&timezone=Mars/Olympus', 'timezone'],
        ['from=2030-02-30&to=2030-03-11', 'from'],
        ['from=10-03-2030&to=2030-03-11', 'from'],
        ['from=2030-03-12&to=2030-03-11', 'from'],
        ['from=2020-01-01&to=2030-03-11', 'to'],
      ]) {
        const res = await daily(query);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expect(JSON.parse(res.text).errors[0].field).toBe(field);
      }
    });

    it('writes each event in the same transaction as its change: a failing change leaves no event', async () => {
      const target = (await post({ content: 'steady', status: 'suggested' })).body;
      await sql(`create function social.refuse_explosive() returns trigger language plpgsql as $$
        begin if new.content = 'explode' then raise exception 'refused by test trigger'; end if; return new; end $$`);
      await sql(
        'create trigger refuse_explosive before insert or update on social.post for each row execute function social.refuse_explosive()',
      );
      try {
        const eventsBefore = await sql('select count(*)::int as n from social.content_event');
        const edit = await rest('PATCH', `${base}/api/content-ops/items/${target.id}`, { content: 'explode' }, alice);
        expect(edit.status).toBe(500);
        expect(JSON.stringify(edit.body)).not.toMatch(/refused by test trigger|social\.post|insert|update/i);
        const create = await post({ content: 'explode' });
        expect(create.status).toBe(500);
        expect(await sql('select count(*)::int as n from social.content_event')).toEqual(eventsBefore);
        expect((await item(target.id)).body).toMatchObject({ content: 'steady', status: 'suggested' });
        expect(await eventTypes(target.id)).toEqual(['created']);
      } finally {
        await sql('drop trigger refuse_explosive on social.post');
        await sql('drop function social.refuse_explosive()');
      }
    });

    it('never updates or deletes an audit event', async () => {
      await expect(sql(`update social.content_event set type = 'edited'`)).rejects.toThrow(/append-only/);
      await expect(sql('delete from social.content_event')).rejects.toThrow(/append-only/);
      await expect(sql('truncate social.content_event')).rejects.toThrow(/append-only/);
    });
  });

  describe('API keys on the wire', () => {
    let brandA: string;
    let brandB: string;
    let itemA: string;
    let itemB: string;

    const createKey = async (input: Record<string, unknown>, headers = alice) =>
      graphql<any>(
        gateway,
        'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key apiKey { id name scopes brandIds lastUsedAt } } }',
        { input },
        headers,
      );

    beforeAll(async () => {
      const heidi = { authorization: `Bearer ${await platform.token('heidi')}` };
      alice = alice ?? heidi;
      brandA = (await rest('POST', `${base}/api/brands`, { name: 'Reach A' }, alice)).body.id;
      brandB = (await rest('POST', `${base}/api/brands`, { name: 'Reach B' }, alice)).body.id;
      itemA = (await post({ brandId: brandA, content: 'in A', scheduledAt: '2036-01-01T00:00:00Z' })).body.id;
      itemB = (await post({ brandId: brandB, content: 'in B', scheduledAt: '2036-01-01T00:00:00Z' })).body.id;
    });

    it('accepts a key on /api/content-ops/* only, within its brands, and records its use', async () => {
      const made = await createKey({ name: 'agent', scopes: ['posts.read', 'suggestions.write'], brandIds: [brandA] });
      expect(made.body.errors).toBeUndefined();
      const { key, apiKey } = made.body.data.createApiKey;
      expect(key).toMatch(/^sk_/);
      expect(apiKey).toMatchObject({
        name: 'agent',
        scopes: ['posts.read', 'suggestions.write'],
        brandIds: [brandA],
        lastUsedAt: null,
      });
      const stored = await sql('select key_hash from social.api_key where id = ?', [apiKey.id]);
      expect(stored[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(stored[0].key_hash).not.toContain(key);

      const withKey = { 'x-api-key': key };
      const queue = await rest('GET', `${base}/api/content-ops/queue`, undefined, withKey);
      expect(queue.status).toBe(200);
      expect(queue.body.data.map((i: { id: string }) => i.id)).toEqual([itemA]);
      expect((await item(itemA, withKey)).status).toBe(200);
      expect((await item(itemB, withKey)).status).toBe(404);
      expect((await act(itemB, 'approve', undefined, withKey)).status).toBe(404);
      expect(
        (await rest('GET', `${base}/api/content-ops/events?contentId=${itemB}`, undefined, withKey)).body.data,
      ).toEqual([]);
      // Scopes the key lacks: 403; routes that take a bearer token only: 401.
      expect((await rest('GET', `${base}/api/content-ops/daily`, undefined, withKey)).status).toBe(403);
      expect((await rest('PATCH', `${base}/api/content-ops/items/${itemA}`, { content: 'x' }, withKey)).status).toBe(
        403,
      );
      expect((await rest('GET', `${base}/api/posts`, undefined, withKey)).status).toBe(401);
      expect((await rest('GET', `${base}/api/brands`, undefined, withKey)).status).toBe(401);
      expect((await rest('GET', `${base}/api/posts/${itemA}`, undefined, withKey)).status).toBe(401);

      const events = await rest('GET', `${base}/api/content-ops/events?contentId=${itemA}`, undefined, withKey);
      expect(events.body.data.map((e: { type: string }) => e.type)).toEqual(['created']);
      const used = await sql('select last_used_at from social.api_key where id = ?', [apiKey.id]);
      expect(used[0].last_used_at).not.toBeNull();
    });

    it('records the key as the actor of a change', async () => {
      const suggestion = (await post({ brandId: brandA, content: 'agent idea', status: 'suggested' })).body;
      const { key, apiKey } = (await createKey({ name: 'approver', scopes: ['suggestions.write', 'posts.read'] })).body
        .data.createApiKey;
      expect(apiKey.brandIds).toBeNull();
      const approved = await act(suggestion.id, 'approve', undefined, { 'x-api-key': key });
      expect(approved.status).toBe(200);
      const detail = await item(suggestion.id, { 'x-api-key': key });
      expect(detail.body.events[0]).toMatchObject({ type: 'approved', actor: { type: 'api_key', id: apiKey.id } });
      // brand:* reaches every brand of the owner.
      const all = await rest('GET', `${base}/api/content-ops/queue?limit=100`, undefined, { 'x-api-key': key });
      expect(all.body.data.map((i: { id: string }) => i.id)).toEqual(expect.arrayContaining([itemA, itemB]));
    });

    it('refuses unknown and revoked keys with 401', async () => {
      expect((await rest('GET', `${base}/api/content-ops/queue`, undefined, { 'x-api-key': 'sk_nope' })).status).toBe(
        401,
      );
      const { key, apiKey } = (await createKey({ name: 'short-lived', scopes: ['posts.read'] })).body.data.createApiKey;
      expect((await rest('GET', `${base}/api/content-ops/queue`, undefined, { 'x-api-key': key })).status).toBe(200);
      const revoked = await graphql<any>(
        gateway,
        'mutation ($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }',
        { id: apiKey.id },
        alice,
      );
      expect(revoked.body.data.revokeApiKey.revokedAt).not.toBeNull();
      expect((await rest('GET', `${base}/api/content-ops/queue`, undefined, { 'x-api-key': key })).status).toBe(401);
    });

    it('validates new keys: known scopes, own brands, bearer only, no more than the token holds', async () => {
      const codeOf = (res: { body: any }) => res.body.errors?.[0]?.extensions?.code;
      const fieldOf = (res: { body: any }) => res.body.errors?.[0]?.extensions?.errors?.[0]?.field;
      const unknownScope = await createKey({ name: 'k', scopes: ['posts.read', 'root'] });
      expect([codeOf(unknownScope), fieldOf(unknownScope)]).toEqual(['BAD_USER_INPUT', 'scopes']);
      const foreignBrand = await createKey({ name: 'k', scopes: ['posts.read'], brandIds: [brandA] }, bob);
      expect([codeOf(foreignBrand), fieldOf(foreignBrand)]).toEqual(['BAD_USER_INPUT', 'brandIds']);
      const limited = { authorization: `Bearer ${await platform.token('alice', ['posts.read'])}` };
      expect(codeOf(await createKey({ name: 'k', scopes: ['posts.write'] }, limited))).toBe('FORBIDDEN');
      const { key } = (await createKey({ name: 'k', scopes: ['posts.read'] })).body.data.createApiKey;
      expect(codeOf(await createKey({ name: 'k2', scopes: ['posts.read'] }, { 'x-api-key': key }))).toBe('FORBIDDEN');
      expect(codeOf(await createKey({ name: 'k', scopes: ['posts.read'] }, {}))).toBe('UNAUTHENTICATED');
    });
  });

  describe('speed', () => {
    it('lists with a fixed number of SQL statements whatever the page size', async () => {
      const ivan = { authorization: `Bearer ${await platform.token('ivan')}` };
      for (let i = 0; i < 30; i++)
        await post({ content: `bulk ${i}`, platforms: ['x'], scheduledAt: '2037-01-01T00:00:00Z' }, ivan);
      const small = await countStatements(() => rest('GET', `${base}/api/posts?limit=3`, undefined, ivan));
      const large = await countStatements(() => rest('GET', `${base}/api/posts?limit=30`, undefined, ivan));
      expect([small, large]).toEqual([2, 2]);
      const queue = await countStatements(() => rest('GET', `${base}/api/content-ops/queue?limit=30`, undefined, ivan));
      expect(queue).toBe(2);
      const deep =
        'query ($first: Int) { posts(first: $first) { nodes { id brand { name } events { type } publishAttempts { id } } } }';
      const deepSmall = await countStatements(() => graphql(gateway, deep, { first: 3 }, ivan));
      const deepLarge = await countStatements(() => graphql(gateway, deep, { first: 30 }, ivan));
      // posts + count, then one batched query each for brands, events and attempts.
      expect([deepSmall, deepLarge]).toEqual([5, 5]);
      const eventsSmall = await countStatements(() =>
        rest('GET', `${base}/api/content-ops/events?limit=3`, undefined, ivan),
      );
      const eventsLarge = await countStatements(() =>
        rest('GET', `${base}/api/content-ops/events?limit=30`, undefined, ivan),
      );
      expect([eventsSmall, eventsLarge]).toEqual([2, 2]);
      const anyPost = (await rest('GET', `${base}/api/posts?limit=1`, undefined, ivan)).body.data[0].id;
      // The item, then its events and its attempts.
      expect(await countStatements(() => item(anyPost, ivan))).toBe(3);
    });
  });
});
