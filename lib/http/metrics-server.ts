import cluster from 'node:cluster';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../config.js';
import { listen, type RunningServer } from './http.js';
import type { Logger } from '../observability/logger.js';
import { enableProcessMetrics, metricsRegistry } from '../observability/metrics.js';

/**
 * `GET /metrics` on `METRICS_HOST`:`METRICS_PORT` (0: none), apart from `HOST`: it asks for no credential,
 * so it stays on loopback unless a deployment opens it to its scraper. In a `node:cluster` primary whose
 * workers serve the traffic, the answer is every worker's metrics aggregated (prom-client's AggregatorRegistry asks
 * each worker over IPC); a worker serves no port of its own and only answers the primary.
 */
export async function serveMetrics(config: Config, logger: Logger): Promise<RunningServer | undefined> {
  enableProcessMetrics();
  if (cluster.isWorker) {
    AggregatorRegistry.setRegistries([metricsRegistry]);
    // Making one is what sets up a worker's answer to the primary's requests (prom-client adds its IPC listener then).
    new AggregatorRegistry();
    return undefined;
  }
  const port = config.env.METRICS_PORT;
  if (port === 0) return undefined;
  const aggregator = new AggregatorRegistry();
  const log = logger.child({ component: 'metrics' });
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('GET /metrics\n');
      return;
    }
    try {
      const clustered = Object.keys(cluster.workers ?? {}).length > 0;
      const body = clustered ? await aggregator.clusterMetrics() : await metricsRegistry.metrics();
      res.writeHead(200, { 'content-type': metricsRegistry.contentType }).end(req.method === 'HEAD' ? undefined : body);
    } catch (error) {
      log.error({ err: error }, 'metrics could not be collected');
      res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics could not be collected\n');
    }
  };
  try {
    return await listen(
      (req: IncomingMessage, res: ServerResponse) => void answer(req, res),
      port,
      config.env.METRICS_HOST,
      '/metrics',
    );
  } catch (error) {
    // Metrics are for watching the part, not for serving its users: a taken port is an error in the
    // log (and a target down in Prometheus), not a part that refuses to start.
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    log.error({ port }, `METRICS_PORT ${port} is in use: metrics are not served by this process`);
    return undefined;
  }
}
