import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { openSubscriptions, type LiveTransport } from '#gateway/subscriptions/live-metrics.js';
import { createLogger } from '#lib/observability/logger.js';
import { httpClient } from '#lib/rest/graphql-client.js';
import { startSocialRest } from '#rest-adapters/social/index.js';
import { graphql, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { WsClient } from './live-graph-harness.js';

const FOLLOW = 'subscription Follow { contentEvents { type contentId } }';

/** How long a stream may outlive its subscriber: the client left, nothing may wait for another event. */
const LEAVE_MS = 1_000;

/**
 * A subscriber that leaves a quiet stream (no event comes) frees it at once, on every transport: the
 * gateway counts it no more (and gives its cap slot back), and the subgraph's feed no longer follows for it.
 */
describe('a subscriber that leaves a quiet stream', () => {
  let platform: TestPlatform;
  let owner: Record<string, string>;

  const open = async (transport: LiveTransport): Promise<number> =>
    (await openSubscriptions.get()).values.find((value) => value.labels.transport === transport)?.value ?? 0;
  const following = () => platform.subgraphs.social.runtime.contentFeed.following;

  /** Waits until `holds` is true, failing with what was seen last once `ms` passed. */
  const until = async (holds: () => Promise<boolean>, ms: number, what: string) => {
    const deadline = Date.now() + ms;
    while (!(await holds())) {
      if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what} (following ${following()})`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const subscribed = (transport: LiveTransport) =>
    until(async () => (await open(transport)) === 1 && following() === 1, 10_000, `${transport} subscribed`);
  const released = (transport: LiveTransport) =>
    until(async () => (await open(transport)) === 0 && following() === 0, LEAVE_MS, `${transport} released`);

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = { authorization: `Bearer ${await platform.token('leaver')}` };
    // The brand makes the caller's reach; no post is ever created, so every stream stays quiet.
    await graphql(platform.urls.gateway, 'mutation { createBrand(input: { name: "Quiet" }) { id } }', {}, owner);
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it.each([
    ['sse', 'text/event-stream'],
    ['multipart', 'multipart/mixed;subscriptionSpec="1.0",application/json'],
  ] as const)('over %s: the client hangs up', async (transport, accept) => {
    const hangUp = new AbortController();
    const response = await fetch(platform.urls.gateway, {
      method: 'POST',
      headers: { ...owner, 'content-type': 'application/json', accept },
      body: JSON.stringify({ query: FOLLOW }),
      signal: hangUp.signal,
    });
    expect(response.status).toBe(200);
    await subscribed(transport);
    hangUp.abort();
    await released(transport);
  });

  it('over WebSocket: the client completes its subscription, or closes the connection', async () => {
    const wsUrl = platform.urls.gateway.replace(/^http/, 'ws');
    const client = await WsClient.connect(wsUrl, { Authorization: owner.authorization });
    client.subscribe('1', FOLLOW);
    await subscribed('websocket');
    client.send({ id: '1', type: 'complete' });
    await released('websocket');

    client.subscribe('2', FOLLOW);
    await subscribed('websocket');
    client.close();
    await released('websocket');
  });

  /** The client of the REST stream hangs up; the adapter reaches the live graph as `transport`. */
  const restClientLeaves = async (base: string, transport: LiveTransport) => {
    const hangUp = new AbortController();
    const response = await fetch(`${base}/api/content-ops/events`, {
      headers: { ...owner, accept: 'text/event-stream' },
      signal: hangUp.signal,
    });
    expect(response.status).toBe(200);
    await subscribed(transport);
    hangUp.abort();
    await released(transport);
  };

  it('over the REST stream in process: the client of GET /api/content-ops/events hangs up', async () => {
    await restClientLeaves(platform.urls.socialRest, 'in-process');
  });

  it('over the REST stream of an adapter deployed apart (GraphQL over SSE to the gateway)', async () => {
    const apart = await startSocialRest(
      { config: platform.config, logger: createLogger(platform.config) },
      { port: 0, client: httpClient(platform.urls.gateway, platform.config.env.SUBGRAPH_TOKEN[0]) },
    );
    try {
      await restClientLeaves(apart.url, 'sse');
    } finally {
      await apart.close();
    }
  });

  it("on a subgraph's own port (GraphQL over SSE, as Hive Gateway subscribes): the gateway hangs up", async () => {
    const hangUp = new AbortController();
    const response = await fetch(platform.subgraphs.social.url, {
      method: 'POST',
      headers: { ...owner, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: FOLLOW }),
      signal: hangUp.signal,
    });
    expect(response.status).toBe(200);
    await until(async () => following() === 1, 10_000, 'subscribed on the subgraph');
    hangUp.abort();
    await until(async () => following() === 0, LEAVE_MS, 'released on the subgraph');
  });
});
