import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { freePort, freePorts } from './ports.js';

const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

describe('free ports', () => {
  it('are distinct, below the range the kernel hands out on its own, and free to listen on', async () => {
    const ports = [...(await freePorts(20)), await freePort()];
    expect(new Set(ports.slice(0, 20)).size).toBe(20);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(ephemeralStart);
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
