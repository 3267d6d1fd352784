import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import { createTestDatabase } from '#test/support/platform.js';
import { platformPorts } from '#test/support/ports.js';
import { startPlatformProcess } from '#test/support/process.js';

/** Rows in the file: enough that each stop lands while batches are still being written. */
const ROWS = process.env.TEST_DATABASE_URL ? 150_000 : 40_000;

interface Job {
  status: string;
  rows: number | null;
  processed: number;
  created: number;
  updated: number;
  skipped: number;
}

const stopped = (child: ChildProcessWithoutNullStreams, signal: NodeJS.Signals) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });

/**
 * An import whose platform is stopped twice half-way, once cleanly (SIGTERM) and once killed
 * (SIGKILL, one process: nothing drains), goes on after each restart from its last written batch:
 * every row of the file ends up exactly once, none twice and none lost.
 */
describe('contact import: stopped and killed half-way, resumed after restart', () => {
  it('writes every row exactly once', async () => {
    const database = await createTestDatabase();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'import-resume-'));
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      WEB_CONCURRENCY: '1',
      ...(database.url ? { DATABASE_URL: database.url } : {}),
    };
    Object.assign(env, await platformPorts());
    const contacts = `http://127.0.0.1:${env.CONTACTS_REST_PORT}`;
    const read = async (location: string) => (await (await fetch(`${contacts}${location}`)).json()) as Job;
    /** Waits until the job has written at least `rows` rows (and not all of them). */
    async function writtenPast(location: string, rows: number): Promise<Job> {
      for (;;) {
        const job = await read(location);
        expect(['queued', 'running']).toContain(job.status);
        if (job.processed >= rows) return job;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }

    let platform = (await startPlatformProcess(env)).child;
    try {
      const lines = ['firstName,email,company'];
      for (let n = 1; n <= ROWS; n++) lines.push(`Resume${n},resume${n}@resume.example,Resumed Ltd`);
      const form = new FormData();
      form.append('file', new Blob([lines.join('\n')], { type: 'text/csv' }), 'resume.csv');
      const started = await fetch(`${contacts}/api/contacts/import`, {
        method: 'POST',
        body: form,
        headers: { prefer: 'respond-async' },
      });
      expect(started.status).toBe(202);
      const location = started.headers.get('location')!;

      const beforeStop = await writtenPast(location, ROWS / 10);
      await stopped(platform, 'SIGTERM');
      const afterStop = await (async () => {
        platform = (await startPlatformProcess(env)).child;
        return read(location);
      })();
      expect(afterStop.processed).toBeGreaterThanOrEqual(beforeStop.processed);
      expect(afterStop.processed).toBeLessThan(ROWS);

      await writtenPast(location, afterStop.processed + ROWS / 10);
      await stopped(platform, 'SIGKILL');
      platform = (await startPlatformProcess(env)).child;

      let job = await read(location);
      for (const deadline = Date.now() + 150_000; job.status !== 'succeeded' && Date.now() < deadline;) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        job = await read(location);
      }
      expect(job).toMatchObject({
        status: 'succeeded',
        rows: ROWS,
        processed: ROWS,
        created: ROWS,
        updated: 0,
        skipped: 0,
      });
      const exported: string[][] = parse(
        await (await fetch(`${contacts}/api/contacts/export?search=${encodeURIComponent('Resumed Ltd')}`)).text(),
      );
      const emails = exported.slice(1).map((row) => row[3]);
      expect(emails).toHaveLength(ROWS);
      expect(new Set(emails).size).toBe(ROWS);
    } finally {
      await stopped(platform, 'SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
      await database.drop();
    }
  }, 400_000);
});
