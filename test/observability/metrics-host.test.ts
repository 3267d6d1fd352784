import os from 'node:os';
import { afterEach, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '#lib/config.js';
import type { RunningServer } from '#lib/http/http.js';
import { serveMetrics } from '#lib/http/metrics-server.js';
import { freePort } from '#test/support/ports.js';

/** An IPv4 address of this machine that is not loopback: where a stranger on its network would knock. */
const outsideAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;

/** The status of GET /metrics at `host`, or the connection's error code when nothing answers there. */
async function metricsAt(host: string, port: number): Promise<number | string> {
  try {
    return (await fetch(`http://${host}:${port}/metrics`, { signal: AbortSignal.timeout(5000) })).status;
  } catch (error) {
    return ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code ?? String(error);
  }
}

describe('the /metrics port: unauthenticated, so loopback unless METRICS_HOST opens it', () => {
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('defaults METRICS_HOST to 127.0.0.1 and takes only an address to listen on', () => {
    expect(loadConfig({}).env.METRICS_HOST).toBe('127.0.0.1');
    expect(loadConfig({ METRICS_HOST: '0.0.0.0' }).env.METRICS_HOST).toBe('0.0.0.0');
    expect(loadConfig({ METRICS_HOST: '::' }).env.METRICS_HOST).toBe('::');
    expect(() => loadConfig({ METRICS_HOST: 'every interface' })).toThrow(ConfigError);
  });

  it('answers on loopback only by default, even with HOST on every interface', async () => {
    const port = await freePort();
    // HOST is where the parts listen for their clients; it no longer decides where metrics are served.
    server = await serveMetrics(loadConfig({ METRICS_PORT: String(port), HOST: '0.0.0.0' }), pino({ level: 'silent' }));
    expect(server?.server.address()).toMatchObject({ address: '127.0.0.1', port });
    expect(await metricsAt('127.0.0.1', port)).toBe(200);
    if (outsideAddress) expect(await metricsAt(outsideAddress, port)).toBe('ECONNREFUSED');
  });

  it('answers beyond loopback where METRICS_HOST opens it for a scraper', async () => {
    const port = await freePort();
    const config = loadConfig({ METRICS_PORT: String(port), METRICS_HOST: '0.0.0.0' });
    server = await serveMetrics(config, pino({ level: 'silent' }));
    expect(server?.server.address()).toMatchObject({ address: '0.0.0.0', port });
    if (outsideAddress) expect(await metricsAt(outsideAddress, port)).toBe(200);
  });
});
