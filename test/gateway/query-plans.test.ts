import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { federationOperations } from '#gateway/operation-memo.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

/**
 * Each REST route runs a fixed named operation, so the gateway plans each once and then reuses the plan.
 * The full path's cache is measured with the short path off; with it on, repeats skip the cache
 * altogether (test/gateway/short-path.test.ts).
 */
describe('gateway query-plan cache', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ GATEWAY_SHORT_PATH: 'false' });
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('plans each REST operation once, then answers repeats from the cache', async () => {
    const token = await platform.token('plan-user');
    const auth = { authorization: `Bearer ${token}` };
    const created = await rest('POST', `${platform.urls.contactsRest}/api/contacts`, { firstName: 'Plan' });
    const id = (created.body as { id: string }).id;
    const calls = [
      () => rest('GET', `${platform.urls.contactsRest}/api/contacts`),
      () => rest('GET', `${platform.urls.contactsRest}/api/contacts?search=plan&page=1&limit=5`),
      () => rest('GET', `${platform.urls.contactsRest}/api/contacts/${id}`),
      () => rest('GET', `${platform.urls.contactsRest}/api/contacts/${id}/notes`),
      () => rest('GET', `${platform.urls.contactsRest}/api/pipeline`),
      () => rest('GET', `${platform.urls.socialRest}/api/posts`, undefined, auth),
      () => rest('GET', `${platform.urls.socialRest}/api/brands`, undefined, auth),
      () => rest('GET', `${platform.urls.socialRest}/api/integrations`, undefined, auth),
    ];
    for (const call of calls) expect((await call()).status).toBe(200);
    const afterFirst = { ...platform.gateway.queryPlans };
    const operationsAfterFirst = { ...federationOperations };
    for (let round = 0; round < 3; round++) for (const call of calls) expect((await call()).status).toBe(200);
    expect(platform.gateway.queryPlans.misses).toBe(afterFirst.misses);
    expect(platform.gateway.queryPlans.hits - afterFirst.hits).toBe(3 * calls.length);
    // Nor is the operation rebuilt for execution (gateway/operation-memo.ts): asked once per request, built never again.
    expect(federationOperations.asked - operationsAfterFirst.asked).toBe(3 * calls.length);
    expect(federationOperations.built).toBe(operationsAfterFirst.built);
  });

  it('answers a kept operation by the variables of each request', async () => {
    const query =
      'query Shape($full: Boolean!) { contactPage(limit: 1) { total items { id firstName @include(if: $full) } } }';
    const ask = async (full: boolean) =>
      (await graphql<any>(platform.urls.gateway, query, { full })).body.data.contactPage.items[0];
    for (let round = 0; round < 2; round++) {
      expect(Object.keys(await ask(true)).sort()).toEqual(['firstName', 'id']);
      expect(Object.keys(await ask(false))).toEqual(['id']);
    }
  });
});
