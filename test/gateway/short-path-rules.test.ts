import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '#lib/config.js';
import { createLogger } from '#lib/observability/logger.js';
import { graphqlOperations } from '#lib/observability/metrics.js';
import { startTracing, type Tracing } from '#lib/observability/tracing.js';
import { LogCollector } from '#test/support/logs.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

/** An OTLP/HTTP receiver of JSON-encoded spans (as in test/observability/tracing.test.ts). */
async function startReceiver() {
  const spans: ExportedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: Array<{ scopeSpans: Array<{ spans: ExportedSpan[] }> }>;
        };
        for (const resource of body.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, spans, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The names of a span's ancestors and itself, from the root down, with each name's parent's name. */
function treeOf(trace: ExportedSpan[]): string[] {
  const byId = new Map(trace.map((span) => [span.spanId, span]));
  return trace
    .map((span) => `${(span.parentSpanId && byId.get(span.parentSpanId)?.name) || '-'} > ${span.name}`)
    .sort();
}

async function gatewayOperations(operation: string): Promise<number> {
  const metric = await graphqlOperations.get();
  return metric.values
    .filter(
      (value) =>
        value.labels.part === 'gateway' && value.labels.operation === operation && value.labels.outcome === 'ok',
    )
    .reduce((sum, value) => sum + value.value, 0);
}

/**
 * Around the short path, the rules of the full path: the same spans (Apollo Gateway's, the
 * subgraph's operation under its fetch), the same log line, the same metrics labels, the request id.
 * The first REST read of a kind is planned on the full path; the second takes the short path.
 */
describe('the rules around the gateway short path', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let tracing: Tracing;
  let platform: TestPlatform;
  const logs = new LogCollector();
  const otel = () => ({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });

  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    receiver = await startReceiver();
    // The exporter reads its endpoint from the environment, as OpenTelemetry's SDK does.
    for (const [name, value] of Object.entries(otel())) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    const config = loadConfig({ ...otel(), LOG_LEVEL: 'silent' });
    tracing = (await startTracing(config, createLogger(config), 'platform')) as Tracing;
    platform = await startTestPlatform({ ...otel(), LOG_LEVEL: 'debug' }, { logStream: logs });
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

  it('keeps the spans, the log line, the metrics and the request id of the full path', async () => {
    const created = await rest('POST', `${platform.urls.contactsRest}/api/contacts`, { firstName: 'Rules' });
    const url = `${platform.urls.contactsRest}/api/contacts/${created.body.id}`;
    const before = await gatewayOperations('Contact');
    expect((await rest('GET', url, undefined, { 'x-request-id': 'rules-full' })).status).toBe(200);
    const taken = platform.gateway.shortPaths!.taken;
    const second = await rest('GET', url, undefined, { 'x-request-id': 'rules-short' });
    expect(second.status).toBe(200);
    expect(second.headers.get('x-request-id')).toBe('rules-short');
    expect(platform.gateway.shortPaths!.taken).toBe(taken + 1);
    expect(await gatewayOperations('Contact')).toBe(before + 2);
    await tracing.flush();

    const traceOf = (requestId: string) => {
      const lines = logs.lines.filter((line) => line.req?.id === requestId || line.requestId === requestId);
      const traceIds = new Set(lines.map((line) => line.trace_id as string));
      expect(traceIds.size).toBe(1);
      const [traceId] = traceIds;
      return { lines, spans: receiver.spans.filter((span) => span.traceId === traceId) };
    };
    const full = traceOf('rules-full');
    const short = traceOf('rules-short');
    // The same spans in the same places; only the plan is the full path's alone (it planned the operation).
    expect(treeOf(short.spans)).toEqual(treeOf(full.spans).filter((edge) => !edge.endsWith('> gateway.plan')));
    expect(treeOf(short.spans)).toEqual(
      expect.arrayContaining(['gateway.fetch > query Contact__contacts__0', 'gateway.request > gateway.execute']),
    );
    // The same log lines, part by part, with the same fields but for times.
    const shapeOf = (lines: Array<Record<string, unknown>>) =>
      lines
        .map(
          ({
            time: _t,
            durationMs: _d,
            responseTime: _r,
            trace_id: _trace,
            span_id: _span,
            req: _req,
            res: _res,
            requestId: _id,
            ...line
          }) => JSON.stringify(line),
        )
        .sort();
    expect(shapeOf(short.lines)).toEqual(shapeOf(full.lines));
    const operationLine = short.lines.find((line) => line.msg === 'graphql operation');
    expect(operationLine).toEqual(
      expect.objectContaining({ component: 'gateway', operation: 'Contact', outcome: 'ok' }),
    );
  });

  it('runs every fixed operation on the full path when GATEWAY_SHORT_PATH=false', async () => {
    const off = await startTestPlatform({ GATEWAY_SHORT_PATH: 'false' });
    try {
      const created = await rest('POST', `${off.urls.contactsRest}/api/contacts`, { firstName: 'Off' });
      for (let round = 0; round < 3; round++)
        expect((await rest('GET', `${off.urls.contactsRest}/api/contacts/${created.body.id}`)).status).toBe(200);
      expect(off.gateway.shortPaths).toBeUndefined();
      expect(off.gateway.queryPlans.hits).toBeGreaterThanOrEqual(2);
    } finally {
      await off.stop();
    }
  });
});
