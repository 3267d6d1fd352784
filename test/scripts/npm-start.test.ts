import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { platformPorts } from '#test/support/ports.js';
import { PROJECT_ROOT } from '#lib/paths.js';

interface Npm {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  exited: Promise<number | null>;
}

/** `npm <args>` in the project, as an operator or a process manager runs it. */
function npm(args: string[], env: Record<string, string>): Npm {
  const child = spawn('npm', args, {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), METRICS_PORT: '0', ...env },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

const portsOf = platformPorts;

async function until(condition: () => boolean | Promise<boolean>, what: string, withinMs: number): Promise<void> {
  for (const started = Date.now(); Date.now() - started < withinMs;) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`gave up waiting (${withinMs} ms): ${what}`);
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const refusesConnections = (port: string) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

describe('npm start under a process manager, and the embedded databases of its DATA_DIR', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'npm-start-test-'));
  const lockFile = path.join(dataDir, 'embedded-database.lock');
  const platformPid = () => (JSON.parse(readFileSync(lockFile, 'utf8')) as { pid: number }).pid;
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  /** `npm start` on the test's DATA_DIR, once it prints its URLs; answers its ports too. */
  async function npmStart(): Promise<Npm & { ports: Record<string, string> }> {
    const ports = await portsOf();
    const started = npm(['start'], { DATA_DIR: dataDir, LOG_LEVEL: 'info', ...ports });
    await Promise.race([
      until(() => started.output().includes('Platform running'), 'npm start printing its URLs', 300_000),
      started.exited.then((code) => {
        throw new Error(`npm start exited with ${code}:\n${started.output()}`);
      }),
    ]);
    return { ...started, ports };
  }

  /** A signal to npm alone (not its process group), as systemd, tini or `kill <pid>` sends it. */
  async function expectStopsOn(signal: NodeJS.Signals): Promise<void> {
    const started = await npmStart();
    const pid = platformPid();
    expect(pid).not.toBe(started.child.pid);
    started.child.kill(signal);
    await started.exited;
    await until(() => !isAlive(pid), `the platform (pid ${pid}) exiting after ${signal} to npm`, 30_000);
    // Drained, as on Ctrl-C, and every port is free for the next start.
    expect(started.output()).toContain('stopped cleanly');
    for (const port of Object.values(started.ports)) expect(await refusesConnections(port)).toBe(true);
    expect(existsSync(lockFile)).toBe(false);
  }

  it('stops the platform, drained, when npm gets SIGTERM', () => expectStopsOn('SIGTERM'), 400_000);
  it('stops the platform, drained, when npm gets SIGHUP', () => expectStopsOn('SIGHUP'), 300_000);
  it('stops the platform, drained, when npm gets SIGINT', () => expectStopsOn('SIGINT'), 300_000);

  it('refuses a second process on the running DATA_DIR, naming the running one, and opens nothing', async () => {
    const running = await npmStart();
    try {
      const pid = platformPid();
      const migrate = npm(['run', 'migrate'], { DATA_DIR: dataDir });
      expect(await migrate.exited).toBe(1);
      expect(migrate.output()).toContain(`in use by another process (pid ${pid}: `);
      expect(migrate.output()).toMatch(/dist\/scripts\/start\.js/);
      // One line says it all: no log record repeating it.
      expect(migrate.output()).not.toContain('"level"');

      const second = npm(['start'], { DATA_DIR: dataDir, ...(await portsOf()) });
      expect(await second.exited).toBe(1);
      expect(second.output()).toContain(`in use by another process (pid ${pid}: `);
      // The running platform still holds it and still serves.
      expect(platformPid()).toBe(pid);
      const health = await fetch(`http://127.0.0.1:${running.ports.CONTACTS_REST_PORT}/readyz`);
      expect(health.status).toBe(200);
    } finally {
      running.child.kill('SIGTERM');
      await running.exited;
    }
  }, 400_000);

  it('takes over a lock left by a process that was killed', async () => {
    // A pid certainly not alive: a process that has exited.
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(gone.stdout);
    writeFileSync(
      lockFile,
      JSON.stringify({ pid: deadPid, command: 'dist/scripts/start.js', since: new Date().toISOString() }),
    );
    const migrate = npm(['run', 'migrate'], { DATA_DIR: dataDir });
    expect(await migrate.exited).toBe(0);
    expect(existsSync(lockFile)).toBe(false);
  }, 300_000);
});

describe('npm run worker on the embedded database', () => {
  it('says why it cannot run in one line, before starting anything', async () => {
    // Its metrics port taken, as it is while npm start runs beside it.
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const metricsPort = String((taken.address() as net.AddressInfo).port);
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'npm-worker-test-'));
    try {
      const worker = npm(['run', 'worker'], { DATA_DIR: dataDir, METRICS_PORT: metricsPort, HOST: '127.0.0.1' });
      expect(await worker.exited).toBe(1);
      const said = worker
        .output()
        .split('\n')
        .filter((line) => line.trim() && !line.startsWith('>'));
      expect(said).toEqual([
        'npm run worker needs DATABASE_URL: with embedded PGlite the publisher runs inside npm start',
      ]);
    } finally {
      taken.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
