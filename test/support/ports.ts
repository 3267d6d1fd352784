import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/**
 * Where the ports below are picked: under the kernel's ephemeral range. A port asked for with 0, and
 * the local end of every outgoing connection, comes from that range, so a port found free there and
 * closed again may be handed to any other process's next connection before the platform opens it
 * (two test workers connect to PostgreSQL all the time). Below it, a port is taken only by someone
 * asking for it by number.
 */
const BELOW_EPHEMERAL = { lowest: 20_000, highest: ephemeralStart() - 1 };

/**
 * Each Jest worker picks from a slice of its own. Two workers that picked the same port a moment apart would
 * both find it free, and the second platform to open it would fail to start; within one worker, suites run
 * one after the other, so nobody else there asks for a port between its pick and the platform's listen.
 */
const WORKER_SLICES = 8;
const { lowest: LOWEST, highest: HIGHEST } = workerSlice(process.env.JEST_WORKER_ID);
function workerSlice(worker: string | undefined): { lowest: number; highest: number } {
  const id = Number(worker);
  if (!Number.isInteger(id) || id < 1) return BELOW_EPHEMERAL;
  const size = Math.floor((BELOW_EPHEMERAL.highest - BELOW_EPHEMERAL.lowest + 1) / WORKER_SLICES);
  const lowest = BELOW_EPHEMERAL.lowest + ((id - 1) % WORKER_SLICES) * size;
  return { lowest, highest: lowest + size - 1 };
}
function ephemeralStart(): number {
  try {
    const [start] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(start) && start > LOWEST + 1000) return start;
  } catch {
    // No /proc (not Linux): Linux's default start is below macOS's and Windows's ranges too.
  }
  return 32_768;
}

/** A server listening on a random port of the range above, another port tried while one is taken. */
async function listenOnFreePort(): Promise<{ server: Server; port: number }> {
  for (;;) {
    const port = LOWEST + Math.floor(Math.random() * (HIGHEST - LOWEST + 1));
    const server = createServer();
    const listening = await new Promise<boolean>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        error.code === 'EADDRINUSE' ? resolve(false) : reject(error),
      );
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (listening) return { server, port };
  }
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/**
 * A port nobody listens on right now. For the ports a suite or a benchmark must know before boot (a REST service
 * whose signed URLs name its own address); everything else lets the platform pick port 0.
 */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port;
}

/** `count` distinct ports nobody listens on right now: each is held until all are found. */
export async function freePorts(count: number): Promise<number[]> {
  const held: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const { server, port } = await listenOnFreePort();
      held.push(server);
      ports.push(port);
    }
    return ports;
  } finally {
    await Promise.all(held.map(close));
  }
}

/** The environment variables of the platform's seven listening ports (lib/config.ts), gateway first. */
export const PORT_VARIABLES = [
  'GATEWAY_PORT',
  'SOCIAL_REST_PORT',
  'SURVEYS_REST_PORT',
  'CONTACTS_REST_PORT',
  'SOCIAL_SUBGRAPH_PORT',
  'SURVEYS_SUBGRAPH_PORT',
  'CONTACTS_SUBGRAPH_PORT',
] as const;

/** The seven port variables of one platform, by name, set to distinct free ports (asked one by one, two could coincide). */
export async function platformPorts(): Promise<Record<string, string>> {
  const ports = await freePorts(PORT_VARIABLES.length);
  return Object.fromEntries(PORT_VARIABLES.map((name, i) => [name, String(ports[i])]));
}
