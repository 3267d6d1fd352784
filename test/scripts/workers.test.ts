import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '#lib/paths.js';
import { createTestDatabase, rest, type TestDatabase } from '#test/support/platform.js';
import { platformPorts } from '#test/support/ports.js';

interface Started {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  /** The log lines written so far, parsed. */
  lines: () => Record<string, any>[];
  ports: Record<string, string>;
}

/** `npm start` on PostgreSQL with WEB_CONCURRENCY=2, once both workers serve. */
async function startTwoWorkers(databaseUrl: string, dataDir: string): Promise<Started> {
  const ports = await platformPorts();
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'dist', 'scripts', 'start.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      WEB_CONCURRENCY: '2',
      LOG_LEVEL: 'info',
      ...ports,
    },
  });
  let output = '';
  const lines = () =>
    output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, any>);
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 150 s:\n${output}`)), 150_000);
    const check = () => {
      // Worker 1 prints the URLs; each worker says when it is serving (before that, a stop has nothing to drain).
      const ready = new Set(
        lines()
          .filter((line) => line.msg === 'serving')
          .map((line) => line.pid),
      );
      if (output.includes('Platform running') && ready.size === 2) {
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve();
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${output}`));
    });
  });
  return { child, output: () => output, lines, ports };
}

/**
 * `npm start` on PostgreSQL with WEB_CONCURRENCY=2: two workers, each the whole platform, on the same
 * ports; one rate limit for both (counted in the primary); one publisher.
 */
(process.env.TEST_DATABASE_URL ? describe : describe.skip)('npm start with two workers', () => {
  let database: TestDatabase;
  let child: ChildProcessWithoutNullStreams;
  let started: Started;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'workers-test-'));
  const lines = () => started.lines();
  const output = () => started.output();
  let ports: Record<string, string> = {};

  beforeAll(async () => {
    database = await createTestDatabase();
    started = await startTwoWorkers(database.url!, dataDir);
    child = started.child;
    ports = started.ports;
  }, 200_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves every port from both workers, and prints the URLs once', async () => {
    expect(output().match(/Platform running \(PostgreSQL, 2 workers\)/g)).toHaveLength(1);
    // Both databases are ready, but on a loaded machine the second worker may still be opening its
    // ports: until it listens, the primary hands every connection to the first. So ask until both
    // have answered (their log lines name them), for at most 20 s.
    const answeredBy = () =>
      new Set(
        lines()
          .filter((line) => String(line.req?.id ?? '').startsWith('spread-') && line.component === 'contacts-rest')
          .map((line) => line.pid),
      );
    const deadline = Date.now() + 20_000;
    for (let i = 0; answeredBy().size < 2 && Date.now() < deadline; i++) {
      // A new connection each time: the primary hands connections to the workers in turn.
      const res = await rest('GET', `http://127.0.0.1:${ports.CONTACTS_REST_PORT}/api/contacts`, undefined, {
        connection: 'close',
        'x-request-id': `spread-${i}`,
      });
      expect(res.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(answeredBy().size).toBe(2);
  });

  it('counts one rate limit across both workers', async () => {
    const request = () =>
      rest(
        'POST',
        `http://127.0.0.1:${ports.SURVEYS_REST_PORT}/api/auth/magic/request`,
        { email: 'limited@example.com' },
        { connection: 'close' },
      );
    // Five sign-in links per address per 15 minutes: in memory per worker, six would pass (three on each).
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await request()).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
  });

  it('runs the publisher in one worker only, and stops cleanly on SIGTERM', async () => {
    expect(lines().some((line) => line.msg === 'workers started' && line.workers === 2)).toBe(true);
    const publishers = lines().filter(
      (line) => line.component === 'publisher' && line.msg === 'publisher working on the queue',
    );
    expect(publishers).toHaveLength(1);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

(process.env.TEST_DATABASE_URL ? describe : describe.skip)('npm start with two workers, its primary killed', () => {
  it('each worker stops, drained, rather than serving on', async () => {
    const database = await createTestDatabase();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'workers-orphan-test-'));
    try {
      const started = await startTwoWorkers(database.url!, dataDir);
      const workers = [
        ...new Set(
          started
            .lines()
            .filter((line) => line.msg === 'serving')
            .map((line) => line.pid as number),
        ),
      ];
      expect(workers).toHaveLength(2);
      // SIGKILL: the primary cannot stop its workers itself.
      started.child.kill('SIGKILL');
      const alive = (pid: number) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      for (const deadline = Date.now() + 30_000; workers.some(alive) && Date.now() < deadline;)
        await new Promise((resolve) => setTimeout(resolve, 200));
      expect(workers.filter(alive)).toEqual([]);
      // Each drained as on SIGTERM (node:cluster alone would have ended it at once).
      const stopped = (msg: string) =>
        new Set(
          started
            .lines()
            .filter((line) => line.msg === msg)
            .map((line) => line.pid as number),
        );
      // A worker's last lines may still be in the pipe when its process is gone: read on until they arrive.
      const allStopped = () => workers.every((pid) => stopped('stopped cleanly').has(pid));
      for (const deadline = Date.now() + 10_000; !allStopped() && Date.now() < deadline;)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect([...stopped('stopped cleanly')].sort()).toEqual([...workers].sort());
    } finally {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 200_000);
});
