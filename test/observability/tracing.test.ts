import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/logger.js';
import { startTracing, type Tracing } from '../../lib/tracing.js';
import { LogCollector } from '../support/logs.js';
import { rest, startTestPlatform, type TestPlatform } from '../support/platform.js';

/** One span as OTLP/JSON carries it (ids in hex). */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
}

/**
 * A local OTLP/HTTP receiver: the collector's `/v1/traces` endpoint, decoding the JSON encoding of
 * ExportTraceServiceRequest (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) and answering as a collector does.
 */
async function startReceiver(): Promise<{ url: string; spans: ExportedSpan[]; paths: string[]; serviceNames: Set<string>; close(): Promise<void> }> {
  const spans: ExportedSpan[] = [];
  const paths: string[] = [];
  const serviceNames = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: Array<{ resource: { attributes: ExportedSpan['attributes'] }; scopeSpans: Array<{ spans: ExportedSpan[] }> }>;
        };
        for (const resourceSpans of body.resourceSpans) {
          const name = resourceSpans.resource.attributes.find((attribute) => attribute.key === 'service.name')?.value.stringValue;
          if (name) serviceNames.add(name);
          for (const scope of resourceSpans.scopeSpans) spans.push(...scope.spans);
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    paths,
    serviceNames,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const attribute = (span: ExportedSpan, key: string) => span.attributes.find((item) => item.key === key)?.value;

describe('one REST request gives one trace, down to its SQL', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let tracing: Tracing;
  let platform: TestPlatform;
  const logs = new LogCollector();
  const otel = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'platform-under-test' };
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    receiver = await startReceiver();
    // The SDK reads OpenTelemetry's own variables from the environment, as it does in production.
    const env = { ...otel, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    for (const [name, value] of Object.entries(env)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    const config = loadConfig({ ...env, LOG_LEVEL: 'silent' });
    tracing = (await startTracing(config, createLogger(config), 'platform')) as Tracing;
    expect(tracing).toBeDefined();
    platform = await startTestPlatform({ ...env, LOG_LEVEL: 'info' }, { logStream: logs });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await tracing?.close();
    await receiver?.close();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('chains the REST span, the gateway plan and fetch, the subgraph operation and resolver, and each SQL statement', async () => {
    const created = await rest('POST', `${platform.urls.contactsRest}/api/contacts`, { firstName: 'Grace', email: 'grace@example.com' });
    expect(created.status).toBe(201);
    const read = await rest('GET', `${platform.urls.contactsRest}/api/contacts/${created.body.id}`, undefined, { 'x-request-id': 'traced-1' });
    expect(read.status).toBe(200);
    await tracing.flush();

    const restSpan = receiver.spans.find((span) => span.name === 'GET /api/contacts/:id');
    expect(restSpan).toBeDefined();
    expect(restSpan?.parentSpanId ?? '').toBe('');
    expect(attribute(restSpan!, 'http.route')?.stringValue).toBe('/api/contacts/:id');
    const trace = receiver.spans.filter((span) => span.traceId === restSpan?.traceId);
    const byId = new Map(trace.map((span) => [span.spanId, span]));

    // Every span of the request is in this one trace and hangs, through its parents, from the REST span.
    for (const span of trace) {
      let cursor: ExportedSpan | undefined = span;
      while (cursor?.parentSpanId) cursor = byId.get(cursor.parentSpanId);
      expect(cursor).toBe(restSpan);
    }

    const sql = trace.find((span) => span.name === 'SELECT contacts' && attribute(span, 'db.query.text')?.stringValue?.includes('"contacts"'));
    expect(sql).toBeDefined();
    // SQL with placeholders only: no value of the request in the span.
    expect(attribute(sql!, 'db.query.text')?.stringValue).not.toContain(created.body.id as string);
    const chain: string[] = [];
    for (let cursor: ExportedSpan | undefined = sql; cursor; cursor = cursor.parentSpanId ? byId.get(cursor.parentSpanId) : undefined) chain.unshift(cursor.name);
    expect(chain[0]).toBe('GET /api/contacts/:id');
    expect(chain.at(-1)).toBe('SELECT contacts');
    const order = ['GET /api/contacts/:id', 'gateway.request', 'gateway.execute', 'gateway.fetch', 'POST /graphql', 'query Contact__contacts__0', 'Query.contact', 'SELECT contacts'];
    expect(chain.filter((name) => order.includes(name))).toEqual(order);
    // The plan is a sibling under the gateway's request span.
    const gatewayRequest = trace.find((span) => span.name === 'gateway.request');
    expect(trace.find((span) => span.name === 'gateway.plan')?.parentSpanId).toBe(gatewayRequest?.spanId);
    expect(receiver.serviceNames).toEqual(new Set(['platform-under-test']));
  });

  it('merges trivial resolvers and makes no SQL span outside a request', () => {
    // Contact's plain fields (firstName, email...) are property reads: no span of their own.
    expect(receiver.spans.some((span) => span.name === 'Contact.firstName')).toBe(false);
  });

  it('puts the trace id in the log lines beside the request id', () => {
    const lines = logs.lines.filter((line) => line.req?.id === 'traced-1' || line.requestId === 'traced-1');
    const components = new Set(lines.map((line) => line.component));
    expect(components).toEqual(new Set(['contacts-rest', 'gateway', 'contacts-subgraph']));
    const traceIds = new Set(lines.map((line) => line.trace_id));
    expect(traceIds.size).toBe(1);
    const traceId = [...traceIds][0];
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(receiver.spans.some((span) => span.traceId === traceId && span.name === 'GET /api/contacts/:id')).toBe(true);
  });

  it('exports traces only: no metrics or logs go to the OTLP endpoint', () => {
    expect(receiver.paths.length).toBeGreaterThan(0);
    for (const path of receiver.paths) expect(path).toMatch(/^POST \/v1\/traces application\/json/);
  });
});
