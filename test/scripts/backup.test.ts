import { execFile, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '#lib/paths.js';
import { platformPorts } from '#test/support/ports.js';
import { startPlatformProcess } from '#test/support/process.js';

/** A built script with `args`, on `dataDir`: its exit code and all it wrote. */
const run = (script: string, args: string[], dataDir: string) =>
  promisify(execFile)(process.execPath, [path.join(PROJECT_ROOT, 'dist', 'scripts', `${script}.js`), ...args], {
    env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, output: `${stdout}${stderr}` }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      output: `${error.stdout}${error.stderr}`,
    }),
  );

const stopped = (child: ChildProcessWithoutNullStreams) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

/** Backups of the embedded default: taken while it serves, restored into a new DATA_DIR, started on it. */
describe('npm run backup and npm run restore', () => {
  const folders: string[] = [];
  const folder = (name: string) => {
    const made = mkdtempSync(path.join(os.tmpdir(), `${name}-`));
    folders.push(made);
    return made;
  };
  afterAll(() => folders.forEach((made) => rmSync(made, { recursive: true, force: true })));

  const platformOn = async (dataDir: string) => {
    const env: Record<string, string> = { DATA_DIR: dataDir, HOST: '127.0.0.1' };
    Object.assign(env, await platformPorts());
    const { child } = await startPlatformProcess(env);
    return { child, contacts: `http://127.0.0.1:${env.CONTACTS_REST_PORT}` };
  };
  const create = (contacts: string, firstName: string) =>
    fetch(`${contacts}/api/contacts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ firstName }),
    });
  const names = async (contacts: string) =>
    ((await (await fetch(`${contacts}/api/contacts?limit=100`)).json()) as { data: Array<{ firstName: string }> }).data
      .map((contact) => contact.firstName)
      .sort();

  it('archives a running platform with its writes going on, and a new DATA_DIR restored from it starts with the data', async () => {
    const original = folder('backup-original');
    const archive = path.join(folder('backup-archives'), 'platform.tar.gz');
    const running = await platformOn(original);
    let restoredRun: Awaited<ReturnType<typeof platformOn>> | undefined;
    try {
      for (const name of ['Ada', 'Grace', 'Linus']) expect((await create(running.contacts, name)).status).toBe(201);
      // Writes go on while the backup is taken: it must neither stop them nor be torn by them.
      let writing = true;
      const writer = (async () => {
        let written = 0;
        while (writing && written < 50)
          if ((await create(running.contacts, `During${written++}`)).status !== 201) throw new Error('a write failed');
        return written;
      })();
      const backup = await run('backup', ['--out', archive], original);
      writing = false;
      expect(await writer).toBeGreaterThan(0);
      expect(backup).toMatchObject({ code: 0 });
      expect(backup.output).toContain('databases: contacts, social, surveys');

      // A DATA_DIR that holds anything is refused.
      const occupied = folder('backup-occupied');
      writeFileSync(path.join(occupied, 'something'), 'x');
      const refused = await run('restore', [archive], occupied);
      expect(refused.code).toBe(1);
      expect(refused.output).toContain('is not empty');

      const restored = path.join(folder('backup-restored'), 'data');
      expect(await run('restore', [archive], restored)).toMatchObject({ code: 0 });
      // The keys came along: what the original sealed and signed, the restored one opens.
      expect(readFileSync(path.join(restored, 'secrets', 'master.key'), 'utf8')).toBe(
        readFileSync(path.join(original, 'secrets', 'master.key'), 'utf8'),
      );
      restoredRun = await platformOn(restored);
      const there = await names(restoredRun.contacts);
      expect(there).toEqual(expect.arrayContaining(['Ada', 'Grace', 'Linus']));
      // Every contact the restored copy holds was written on the original, and each once.
      expect(new Set(there).size).toBe(there.length);
    } finally {
      await stopped(running.child);
      if (restoredRun) await stopped(restoredRun.child);
    }
  }, 240_000);
});
