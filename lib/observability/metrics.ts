import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { routePatternOf } from './route-pattern.js';

/**
 * The process's Prometheus metrics. One registry per process, as `/metrics` describes the whole
 * process (every part `npm start` runs in it, told apart by the `part` label): counting is a side
 * effect of serving, like logging, so the instruments are module-level rather than passed down
 * through every service. Every label value comes from a closed set (route patterns, error codes,
 * platform names, operation names capped in number), never from an id or free user input.
 */
export const metricsRegistry = new Registry();

const registers = [metricsRegistry];
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const QUERY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

export const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by part, route pattern, method and status',
  labelNames: ['part', 'route', 'method', 'status'] as const,
  registers,
});

export const httpDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from the request to the end of its answer, by part, route pattern, method and status',
  labelNames: ['part', 'route', 'method', 'status'] as const,
  buckets: DURATION_BUCKETS,
  registers,
});

export const graphqlOperations = new Counter({
  name: 'graphql_operations_total',
  help: 'GraphQL operations run, by part (gateway or subgraph), operation name and outcome (ok or the first error code)',
  labelNames: ['part', 'operation', 'outcome'] as const,
  registers,
});

export const graphqlDuration = new Histogram({
  name: 'graphql_operation_duration_seconds',
  help: 'Time to run one GraphQL operation, by part and operation name',
  labelNames: ['part', 'operation'] as const,
  buckets: DURATION_BUCKETS,
  registers,
});

export const dbQueryDuration = new Histogram({
  name: 'db_query_duration_seconds',
  help: 'Time of one SQL statement, by service, statement kind (select, insert, update, delete, other) and outcome',
  labelNames: ['service', 'statement', 'outcome'] as const,
  buckets: QUERY_BUCKETS,
  registers,
});

/** Gauges read at scrape time (pool sizes, queue depths): each source registers how to read itself. */
type Reader<Labels extends string> = (gauge: Gauge<Labels>) => Promise<void> | void;

function scrapedGauge<Labels extends string>(name: string, help: string, labelNames: readonly Labels[]) {
  const readers = new Set<Reader<Labels>>();
  const gauge: Gauge<Labels> = new Gauge<Labels>({
    name,
    help,
    labelNames,
    registers,
    // prom-client calls this before every scrape, also when a cluster primary asks a worker.
    async collect() {
      await Promise.all([...readers].map(async (read) => read(gauge)));
    },
  });
  return {
    gauge,
    /** Reads the source before every scrape until the returned function is called (when the source closes). */
    readOnScrape(read: Reader<Labels>): () => void {
      readers.add(read);
      return () => {
        readers.delete(read);
      };
    },
  };
}

export const dbPoolConnections = scrapedGauge(
  'db_pool_connections',
  "Connections of a service's PostgreSQL pool: open (total), idle, callers waiting for one (waiting), and the pool's limit (max)",
  ['service', 'state'] as const,
);

export const eventFeedFollowers = scrapedGauge(
  'event_feed_followers',
  "Subscribers following a service's event log in this process, whichever way they came (the gateway, a subgraph's own port)",
  ['channel'] as const,
);

export const publishQueueJobs = scrapedGauge(
  'publish_queue_jobs',
  "Jobs of the publisher's queues as pg-boss counts them: waiting (due now), deferred (scheduled later), active, failed (retained)",
  ['queue', 'state'] as const,
);

export const publishOutcomes = new Counter({
  name: 'publish_outcomes_total',
  help: 'Calls to a social platform to publish a post, by platform and outcome (succeeded, failed)',
  labelNames: ['platform', 'outcome'] as const,
  registers,
});

export const webhookDeliveries = new Counter({
  name: 'webhook_deliveries_total',
  help: 'Attempts to deliver a webhook event, by outcome (succeeded; retrying or failed after a failed attempt)',
  labelNames: ['outcome'] as const,
  registers,
});

export const signInMails = new Counter({
  name: 'signin_mails_total',
  help: 'Sign-in (magic link) mails, by transport (smtp, or log when SMTP_URL is unset) and outcome (sent, failed)',
  labelNames: ['transport', 'outcome'] as const,
  registers,
});

export const rateLimitRefusals = new Counter({
  name: 'rate_limit_refusals_total',
  help: 'Requests refused by a rate limit, by limit name',
  labelNames: ['limit'] as const,
  registers,
});

/**
 * A label value from a set that callers choose (GraphQL operation names): kept as given while it
 * looks like a GraphQL name and fewer than `limit` values were seen, `other` after that, so a
 * client inventing names cannot grow the series without bound.
 */
export class BoundedLabel {
  private readonly seen = new Set<string>();
  constructor(private readonly limit = 200) {}

  of(value: string | null | undefined, fallback = 'anonymous'): string {
    if (!value) return fallback;
    if (this.seen.has(value)) return value;
    if (!/^[_A-Za-z][_0-9A-Za-z]{0,99}$/.test(value)) return 'invalid';
    if (this.seen.size >= this.limit) return 'other';
    this.seen.add(value);
    return value;
  }
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Express middleware counting and timing every answer of `part`; first in the chain, so probes and errors count too. */
export function httpMetrics(part: string, mounts: readonly string[] = []) {
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const stop = httpDuration.startTimer();
    res.once('finish', () => {
      const labels = {
        part,
        route: routePatternOf(req, mounts),
        method: METHODS.has(req.method ?? '') ? (req.method as string) : 'OTHER',
        status: String(res.statusCode),
      };
      stop(labels);
      httpRequests.inc(labels);
    });
    next();
  };
}

let processMetrics = false;

/** CPU, memory, handles, GC and event-loop lag of this process (prom-client's default metrics), once. */
export function enableProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: metricsRegistry });
}
