import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { DataDirInUseError, holdDataDir } from '#lib/data/data-dir-lock.js';

describe('the DATA_DIR lock of the embedded databases', () => {
  let dataDir: string;
  let lockFile: string;
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'data-dir-lock-'));
    lockFile = path.join(dataDir, 'embedded-database.lock');
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('is held once for all the databases of this process, and freed when the last one closes', () => {
    const social = holdDataDir(dataDir);
    const contacts = holdDataDir(dataDir);
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: process.pid });
    social();
    social();
    expect(existsSync(lockFile)).toBe(true);
    contacts();
    expect(existsSync(lockFile)).toBe(false);
  });

  it('refuses while another live process holds it, naming that process, and leaves its lock alone', async () => {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    await new Promise((resolve) => other.once('spawn', resolve));
    try {
      const held = JSON.stringify({ pid: other.pid, command: 'dist/scripts/start.js', since: '2026-01-01T00:00:00Z' });
      writeFileSync(lockFile, held);
      expect(() => holdDataDir(dataDir)).toThrow(DataDirInUseError);
      expect(() => holdDataDir(dataDir)).toThrow(`in use by another process (pid ${other.pid}: dist/scripts/start.js`);
      expect(readFileSync(lockFile, 'utf8')).toBe(held);
    } finally {
      other.kill();
    }
  });

  it('takes over a lock whose process is gone, or that names this very pid (a restarted container)', async () => {
    const gone = spawn(process.execPath, ['-e', '']);
    const deadPid = gone.pid!;
    await new Promise((resolve) => gone.once('exit', resolve));
    for (const pid of [deadPid, process.pid]) {
      writeFileSync(lockFile, JSON.stringify({ pid, command: 'killed', since: '2026-01-01T00:00:00Z' }));
      const release = holdDataDir(dataDir);
      expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: process.pid });
      release();
    }
    // A lock file its holder never finished writing counts as left behind too.
    writeFileSync(lockFile, '');
    holdDataDir(dataDir)();
    expect(existsSync(lockFile)).toBe(false);
  });
});
