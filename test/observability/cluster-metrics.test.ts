import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '#lib/paths.js';
import { freePort } from '#test/support/ports.js';

/**
 * A `node:cluster` primary with two workers, as `npm start` runs with WEB_CONCURRENCY=2: each worker
 * counts requests; the primary's /metrics answers with the workers' counts added up. Runs the built
 * library (dist/), in a process of its own, since cluster workers re-run their entry script.
 */
const SCRIPT = (dist: string) => `
import cluster from 'node:cluster';
import { loadConfig } from '${pathToFileURL(path.join(dist, 'lib', 'config.js')).href}';
import { createLogger } from '${pathToFileURL(path.join(dist, 'lib', 'observability', 'logger.js')).href}';
import { httpRequests } from '${pathToFileURL(path.join(dist, 'lib', 'observability', 'metrics.js')).href}';
import { serveMetrics } from '${pathToFileURL(path.join(dist, 'lib', 'http', 'metrics-server.js')).href}';

const config = loadConfig({ METRICS_PORT: process.env.METRICS_PORT, HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
const logger = createLogger(config);
if (cluster.isPrimary) {
  let counted = 0;
  cluster.on('message', async (_worker, message) => {
    if (message !== 'counted' || ++counted < 2) return;
    await serveMetrics(config, logger);
    console.log('serving');
  });
  cluster.fork();
  cluster.fork();
} else {
  const server = await serveMetrics(config, logger);
  if (server) throw new Error('a worker must not open the metrics port');
  httpRequests.inc({ part: 'gateway', route: '/graphql', method: 'POST', status: '200' }, 3);
  process.send('counted');
}
`;

describe('metrics under node:cluster', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cluster-metrics-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves every worker’s metrics, added up, from the primary', async () => {
    const script = path.join(dir, 'cluster.mjs');
    writeFileSync(script, SCRIPT(path.join(PROJECT_ROOT, 'dist')));
    const port = await freePort();
    const child = spawn(process.execPath, [script], {
      env: { PATH: process.env.PATH ?? '', METRICS_PORT: String(port) },
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      for (let waited = 0; !output.includes('serving'); waited += 100) {
        if (waited > 30_000 || child.exitCode !== null) throw new Error(`the cluster did not start:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(text).toMatch(/^http_requests_total\{part="gateway",route="\/graphql",method="POST",status="200"\} 6$/m);
      // Process metrics of both workers, summed too.
      expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
    }
  }, 60_000);
});
