import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '#lib/observability/logger.js';
import { serveMetrics } from '#lib/http/metrics-server.js';
import type { RunningServer } from '#lib/http/http.js';
import { LogCollector } from '#test/support/logs.js';
import { freePort } from '#test/support/ports.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus' text format, one sample per line: `name{a="b",c="d"} value`. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

function find(samples: Sample[], name: string, labels: Record<string, string>): Sample[] {
  return samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

describe('GET /metrics after real requests', () => {
  let platform: TestPlatform;
  let metrics: RunningServer;
  let samples: Sample[];
  let text: string;
  const missingId = '00000000-0000-4000-8000-000000000000';

  beforeAll(async () => {
    const port = await freePort();
    platform = await startTestPlatform({ METRICS_PORT: String(port) });
    metrics = (await serveMetrics(platform.config, createLogger(platform.config))) as RunningServer;

    const contacts = platform.urls.contactsRest;
    expect(
      (await rest('POST', `${contacts}/api/contacts`, { firstName: 'Ada', email: 'ada@example.com' })).status,
    ).toBe(201);
    expect((await rest('POST', `${contacts}/api/contacts`, { lastName: 'Nobody' })).status).toBe(400);
    expect((await rest('GET', `${contacts}/api/contacts?page=1`)).status).toBe(200);
    expect((await rest('GET', `${contacts}/api/contacts/${missingId}`)).status).toBe(404);
    expect((await rest('GET', `${contacts}/no/such/path/${missingId}`)).status).toBe(404);
    // Five sign-in mails per address and window; the sixth request is refused by the rate limit.
    for (let i = 0; i < 6; i++)
      await rest('POST', `${platform.urls.surveysRest}/api/auth/magic/request`, { email: 'erin@example.com' });
    // A client inventing an operation name over the gateway's HTTP endpoint.
    const token = await platform.token('user-1');
    await graphql(
      platform.urls.gateway,
      'query MyDashboard { posts(first: 1) { nodes { id } } }',
      {},
      { authorization: `Bearer ${token}` },
    );
    // Sign-in mails are sent after the answer.
    await new Promise((resolve) => setTimeout(resolve, 200));

    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    text = await response.text();
    samples = parseExposition(text);
  }, 120_000);

  afterAll(async () => {
    await metrics?.close();
    await platform?.stop();
  });

  it('serves process and event-loop metrics', () => {
    expect(find(samples, 'process_cpu_user_seconds_total', {})).toHaveLength(1);
    expect(find(samples, 'process_resident_memory_bytes', {})).toHaveLength(1);
    expect(find(samples, 'nodejs_eventloop_lag_p99_seconds', {})).toHaveLength(1);
  });

  it('counts and times HTTP answers per part, route pattern, method and status, never by raw path', () => {
    expect(
      find(samples, 'http_requests_total', {
        part: 'contacts-rest',
        route: '/api/contacts',
        method: 'POST',
        status: '201',
      })[0]?.value,
    ).toBe(1);
    expect(
      find(samples, 'http_requests_total', {
        part: 'contacts-rest',
        route: '/api/contacts/:id',
        method: 'GET',
        status: '404',
      })[0]?.value,
    ).toBe(1);
    expect(
      find(samples, 'http_requests_total', {
        part: 'contacts-rest',
        route: 'unmatched',
        method: 'GET',
        status: '404',
      })[0]?.value,
    ).toBe(1);
    expect(
      find(samples, 'http_request_duration_seconds_bucket', {
        part: 'contacts-rest',
        route: '/api/contacts',
        method: 'GET',
        status: '200',
        le: '+Inf',
      })[0]?.value,
    ).toBe(1);
    // The gateway runs the subgraphs of its process directly: no HTTP request reaches their endpoints
    // (their operations are counted below all the same).
    expect(find(samples, 'http_requests_total', { part: 'contacts-subgraph', route: '/graphql' })).toHaveLength(0);
    expect(find(samples, 'http_requests_total', { part: 'gateway', route: '/graphql', method: 'POST' })[0]?.value).toBe(
      1,
    );
    expect(text).not.toContain(missingId);
    expect(text).not.toContain('/no/such/path');
  });

  it('counts GraphQL operations per operation name and outcome, at the gateway and in each subgraph', () => {
    expect(
      find(samples, 'graphql_operations_total', { part: 'gateway', operation: 'CreateContact', outcome: 'ok' })[0]
        ?.value,
    ).toBe(1);
    expect(
      find(samples, 'graphql_operations_total', {
        part: 'gateway',
        operation: 'CreateContact',
        outcome: 'BAD_USER_INPUT',
      })[0]?.value,
    ).toBe(1);
    expect(
      find(samples, 'graphql_operations_total', { part: 'gateway', operation: 'Contact', outcome: 'ok' })[0]?.value,
    ).toBe(1);
    expect(
      find(samples, 'graphql_operations_total', { part: 'gateway', operation: 'MyDashboard', outcome: 'ok' })[0]?.value,
    ).toBe(1);
    expect(
      find(samples, 'graphql_operations_total', { part: 'contacts-subgraph', outcome: 'ok' }).length,
    ).toBeGreaterThan(0);
    expect(
      find(samples, 'graphql_operations_total', { part: 'social-subgraph', outcome: 'ok' }).length,
    ).toBeGreaterThan(0);
    expect(
      find(samples, 'graphql_operation_duration_seconds_count', { part: 'gateway', operation: 'ContactPage' })[0]
        ?.value,
    ).toBe(1);
  });

  it('times SQL statements per service and reads the PostgreSQL pool', () => {
    expect(
      find(samples, 'db_query_duration_seconds_count', { service: 'contacts', statement: 'insert', outcome: 'ok' })[0]
        ?.value,
    ).toBeGreaterThan(0);
    expect(
      find(samples, 'db_query_duration_seconds_count', { service: 'contacts', statement: 'select', outcome: 'ok' })[0]
        ?.value,
    ).toBeGreaterThan(0);
    expect(
      find(samples, 'db_query_duration_seconds_count', { service: 'surveys', statement: 'insert', outcome: 'ok' })[0]
        ?.value,
    ).toBeGreaterThan(0);
    if (platform.config.env.DATABASE_URL) {
      expect(find(samples, 'db_pool_connections', { service: 'contacts', state: 'max' })[0]?.value).toBe(10);
      expect(
        find(samples, 'db_pool_connections', { service: 'contacts', state: 'total' })[0]?.value,
      ).toBeGreaterThanOrEqual(1);
      expect(find(samples, 'db_pool_connections', { service: 'social', state: 'waiting' })).toHaveLength(1);
    }
  });

  it('reports the publish queue from pg-boss, sign-in mails and rate-limit refusals', () => {
    for (const state of ['waiting', 'deferred', 'active', 'failed']) {
      expect(find(samples, 'publish_queue_jobs', { queue: 'social-publish-post', state })).toHaveLength(1);
    }
    expect(text).toContain('# TYPE publish_outcomes_total counter');
    expect(find(samples, 'signin_mails_total', { transport: 'log', outcome: 'sent' })[0]?.value).toBe(5);
    expect(find(samples, 'rate_limit_refusals_total', { limit: 'surveys-sign-in-address-client' })[0]?.value).toBe(1);
  });

  it('starts without metrics, saying so, when METRICS_PORT is taken', async () => {
    const logs = new LogCollector();
    const again = await serveMetrics(
      platform.config,
      createLogger({ ...platform.config, env: { ...platform.config.env, LOG_LEVEL: 'info' } }, logs),
    );
    expect(again).toBeUndefined();
    expect(logs.lines).toContainEqual(expect.objectContaining({ level: 50, component: 'metrics', port: metrics.port }));
  });

  it('answers 404 beside /metrics', async () => {
    const other = await fetch(`${metrics.url.replace(/\/metrics$/, '')}/other`);
    expect(other.status).toBe(404);
  });
});
