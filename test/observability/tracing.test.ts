import { spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '#lib/config.js';
import { createLogger } from '#lib/observability/logger.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { startTracing, type Tracing } from '#lib/observability/tracing.js';
import { LogCollector } from '#test/support/logs.js';
import { freePort } from '#test/support/ports.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

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
async function startReceiver(): Promise<{
  url: string;
  spans: ExportedSpan[];
  paths: string[];
  serviceNames: Set<string>;
  close(): Promise<void>;
}> {
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
          resourceSpans: Array<{
            resource: { attributes: ExportedSpan['attributes'] };
            scopeSpans: Array<{ spans: ExportedSpan[] }>;
          }>;
        };
        for (const resourceSpans of body.resourceSpans) {
          const name = resourceSpans.resource.attributes.find((attribute) => attribute.key === 'service.name')?.value
            .stringValue;
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

let probed = false;

/** Whether `wanted` appears in `names` in this order (other names may stand between). */
function inOrder(names: string[], wanted: string[]): boolean {
  let next = 0;
  for (const name of names) if (name === wanted[next]) next++;
  return next === wanted.length;
}

describe('tracing', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let tracing: Tracing;
  const saved: Record<string, string | undefined> = {};
  const otel = () => ({
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'platform-under-test',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  });

  beforeAll(async () => {
    receiver = await startReceiver();
    // The SDK reads OpenTelemetry's own variables from the environment, as it does in production.
    for (const [name, value] of Object.entries(otel())) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    const config = loadConfig({ ...otel(), LOG_LEVEL: 'silent' });
    tracing = (await startTracing(config, createLogger(config), 'platform')) as Tracing;
    expect(tracing).toBeDefined();
  });

  afterAll(async () => {
    await tracing?.close();
    await receiver?.close();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  describe.each([
    ['in process (npm start)', false],
    ['over HTTP (GATEWAY_URL, the REST service deployed apart)', true],
  ])('one REST request gives one trace, down to its SQL: REST service to gateway %s', (_mode, overHttp) => {
    let platform: TestPlatform;
    const logs = new LogCollector();
    const requestId = `traced-${overHttp ? 'http' : 'in-process'}`;

    beforeAll(async () => {
      const gatewayPort = await freePort();
      platform = await startTestPlatform(
        {
          ...otel(),
          LOG_LEVEL: 'debug',
          ...(overHttp
            ? { GATEWAY_PORT: String(gatewayPort), GATEWAY_URL: `http://127.0.0.1:${gatewayPort}/graphql` }
            : {}),
        },
        { logStream: logs },
      );
    }, 120_000);

    afterAll(async () => {
      await platform?.stop();
    });

    let restSpan: ExportedSpan | undefined;
    let trace: ExportedSpan[] = [];

    it('chains the REST span, the gateway plan and fetch, the subgraph operation and resolver, and each SQL statement', async () => {
      const created = await rest('POST', `${platform.urls.contactsRest}/api/contacts`, {
        firstName: 'Grace',
        email: `grace-${requestId}@example.com`,
      });
      expect(created.status).toBe(201);
      const read = await rest('GET', `${platform.urls.contactsRest}/api/contacts/${created.body.id}`, undefined, {
        'x-request-id': requestId,
      });
      expect(read.status).toBe(200);
      await tracing.flush();

      restSpan = receiver.spans.find(
        (span) =>
          span.name === 'GET /api/contacts/:id' && attribute(span, 'platform.request_id')?.stringValue === requestId,
      );
      expect(restSpan).toBeDefined();
      expect(restSpan?.parentSpanId ?? '').toBe('');
      expect(attribute(restSpan!, 'http.route')?.stringValue).toBe('/api/contacts/:id');
      trace = receiver.spans.filter((span) => span.traceId === restSpan?.traceId);
      const byId = new Map(trace.map((span) => [span.spanId, span]));

      // Every span of the request is in this one trace and hangs, through its parents, from the REST span.
      for (const span of trace) {
        let cursor: ExportedSpan | undefined = span;
        while (cursor?.parentSpanId) cursor = byId.get(cursor.parentSpanId);
        expect(cursor).toBe(restSpan);
      }

      const sql = trace.find(
        (span) =>
          span.name === 'SELECT contacts' && attribute(span, 'db.query.text')?.stringValue?.includes('"contacts"'),
      );
      expect(sql).toBeDefined();
      // SQL with placeholders only: no value of the request in the span.
      expect(attribute(sql!, 'db.query.text')?.stringValue).not.toContain(created.body.id as string);
      const chain: string[] = [];
      for (
        let cursor: ExportedSpan | undefined = sql;
        cursor;
        cursor = cursor.parentSpanId ? byId.get(cursor.parentSpanId) : undefined
      )
        chain.unshift(cursor.name);
      expect(chain[0]).toBe('GET /api/contacts/:id');
      expect(chain.at(-1)).toBe('SELECT contacts');
      const gatewayServer = overHttp ? ['POST /graphql'] : [];
      // The gateway runs its subgraphs in process: the subgraph's operation hangs from the fetch, no HTTP between.
      const order = [
        'GET /api/contacts/:id',
        ...gatewayServer,
        'gateway.request',
        'gateway.execute',
        'gateway.fetch',
        'query Contact__contacts__0',
        'Query.contact',
        'SELECT contacts',
      ];
      expect({ chain, inOrder: inOrder(chain, order) }).toEqual({ chain, inOrder: true });
      expect(chain.filter((name) => name === 'POST /graphql')).toHaveLength(overHttp ? 1 : 0);
      // The plan is a sibling under the gateway's request span.
      const gatewayRequest = trace.find((span) => span.name === 'gateway.request');
      expect(trace.find((span) => span.name === 'gateway.plan')?.parentSpanId).toBe(gatewayRequest?.spanId);
      expect(receiver.serviceNames).toEqual(new Set(['platform-under-test']));
    });

    it('answers probes without a trace', async () => {
      for (const url of [platform.urls.contactsRest, platform.subgraphs.contacts.url.replace(/\/graphql$/, '')]) {
        expect((await rest('GET', `${url}/readyz`)).status).toBe(200);
      }
      await tracing.flush();
      probed = true;
    });

    it('merges trivial resolvers', () => {
      // Contact's plain fields (firstName, email...) are property reads: no span of their own.
      expect(trace.some((span) => span.name === 'Query.contact')).toBe(true);
      expect(trace.some((span) => span.name.startsWith('Contact.'))).toBe(false);
    });

    it('puts the trace id in the log lines beside the request id', () => {
      const lines = logs.lines.filter((line) => line.req?.id === requestId || line.requestId === requestId);
      const components = new Set(lines.map((line) => line.component));
      expect(components).toEqual(new Set(['contacts-rest', 'gateway', 'contacts-subgraph']));
      const traceIds = new Set(lines.map((line) => line.trace_id));
      expect(traceIds).toEqual(new Set([restSpan?.traceId]));
    });
  });

  it('exports traces only: no metrics or logs go to the OTLP endpoint', () => {
    expect(receiver.paths.length).toBeGreaterThan(0);
    for (const path of receiver.paths) expect(path).toMatch(/^POST \/v1\/traces application\/json/);
  });

  it('starts traces at requests only: no trace of a probe, a migration or a readiness query', () => {
    // A job pg-boss runs (the publisher's token renewal, every minute) is a trace of its own, by pg-boss's
    // design: its spans name their messaging system. One may fall into this test's minute.
    const jobSpan = (span: ExportedSpan) => attribute(span, 'messaging.system')?.stringValue === 'pg-boss';
    const roots = receiver.spans.filter((span) => !span.parentSpanId && !jobSpan(span));
    expect(roots.length).toBeGreaterThan(0);
    // Server spans (kind 2) of API requests; the readiness probes were asked too (below), and are not among them.
    expect(roots.filter((span) => span.kind !== 2 || /healthz|readyz/.test(span.name))).toEqual([]);
    expect(probed).toBe(true);
  });
});

/**
 * Without an OTLP endpoint nothing of the SDK is loaded: a process of its own (the built code)
 * starts the platform's tracing and lists the OpenTelemetry SDK modules Node loaded.
 */
describe('tracing unset', () => {
  const loadedSdk = (env: Record<string, string>) => {
    const dist = path.join(PROJECT_ROOT, 'dist', 'lib');
    const script = `
      import { createRequire } from 'node:module';
      const { loadConfig } = await import(${JSON.stringify(pathToFileURL(path.join(dist, 'config.js')).href)});
      const { createLogger } = await import(${JSON.stringify(pathToFileURL(path.join(dist, 'observability', 'logger.js')).href)});
      const { startTracing } = await import(${JSON.stringify(pathToFileURL(path.join(dist, 'observability', 'tracing.js')).href)});
      const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
      const tracing = await startTracing(config, createLogger(config), 'check');
      const loaded = Object.keys(createRequire(import.meta.url).cache);
      const sdkModules = loaded.filter((file) => /@opentelemetry[\\/]sdk-/.test(file)).length;
      const packages = [...new Set(loaded.map((file) => /.*@opentelemetry[\\/]([^\\/]+)/.exec(file)?.[1]).filter(Boolean))];
      console.log(JSON.stringify({ started: tracing !== undefined, sdkModules, packages }));
      await tracing?.close();
    `;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    if (result.status !== 0) throw new Error(result.stderr);
    return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as {
      started: boolean;
      sdkModules: number;
      packages: string[];
    };
  };

  it('loads no SDK module, and does when an endpoint is set', () => {
    expect(loadedSdk({})).toMatchObject({ started: false, sdkModules: 0 });
    expect(loadedSdk({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })).toMatchObject({
      started: true,
      sdkModules: expect.any(Number),
    });
    expect(loadedSdk({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }).sdkModules).toBeGreaterThan(0);
  });

  it('loads the trace SDK and the one OTLP/HTTP exporter asked for: nothing of metrics or logs export, no gRPC', () => {
    const unwanted = /sdk-node|sdk-logs|exporter-(metrics|logs)|grpc|instrumentation|zipkin|prometheus/;
    const protobuf = loadedSdk({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }).packages;
    expect(protobuf).toEqual(expect.arrayContaining(['sdk-trace-node', 'exporter-trace-otlp-proto']));
    expect(protobuf.filter((name) => unwanted.test(name) || name === 'exporter-trace-otlp-http')).toEqual([]);
    const json = loadedSdk({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    }).packages;
    expect(json).toEqual(expect.arrayContaining(['sdk-trace-node', 'exporter-trace-otlp-http']));
    expect(json.filter((name) => unwanted.test(name) || name === 'exporter-trace-otlp-proto')).toEqual([]);
  });
});
