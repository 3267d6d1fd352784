/**
 * Hive Gateway, the free gateway the platform's supergraph is proven on (test/gateway/hive-gateway.test.ts)
 * and measured against (`npm run bench:live`), started as an operator starts it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '#lib/paths.js';
import { freePort } from '#test/support/ports.js';

const HIVE_CLI = path.join(PROJECT_ROOT, 'node_modules', '@graphql-hive', 'gateway', 'dist', 'bin.js');

export interface HiveGateway {
  url: string;
  /** Its process, for its CPU and memory. */
  pid: number;
  stop(): Promise<void>;
}

/**
 * Hive Gateway as an operator runs it: its own CLI, from the project root (where it finds
 * gateway.config.ts), on the checked-in supergraph, pointed at the running subgraphs by the same
 * `*_SUBGRAPH_URL` settings the Node gateway reads.
 */
export async function startHiveGateway(
  subgraphUrls: { social: string; surveys: string; contacts: string },
  settings: Record<string, string> = {},
): Promise<HiveGateway> {
  const port = await freePort();
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [HIVE_CLI, 'supergraph', 'schema/supergraph.graphql'],
    {
      cwd: PROJECT_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        GATEWAY_PORT: String(port),
        SOCIAL_SUBGRAPH_URL: subgraphUrls.social,
        SURVEYS_SUBGRAPH_URL: subgraphUrls.surveys,
        CONTACTS_SUBGRAPH_URL: subgraphUrls.contacts,
        ...settings,
      },
    },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const base = `http://127.0.0.1:${port}`;
  // Bounded by count, not by a clock: Hive Gateway answers /readyz once it has loaded the supergraph.
  for (let attempt = 0; ; attempt += 1) {
    if (exited) throw new Error(`Hive Gateway exited before it was ready:\n${output}`);
    if (attempt === 600) {
      child.kill('SIGKILL');
      throw new Error(`Hive Gateway not ready after 600 tries:\n${output}`);
    }
    const ready = await fetch(`${base}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: `${base}/graphql`,
    pid: child.pid!,
    stop: async () => {
      if (!exited) child.kill('SIGTERM');
      await exit;
    },
  };
}
