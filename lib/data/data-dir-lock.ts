import { closeSync, linkSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

/**
 * One process at a time on the embedded databases of a DATA_DIR. PGlite has no lock between
 * processes: two of them on the same folders corrupt the data (electric-sql/pglite#1106, #892). So
 * whatever opens them (`npm start`, `npm run migrate`, `npm run worker`, `npm run apikey`) first
 * holds `DATA_DIR/embedded-database.lock`, and a second process is refused, naming the first.
 *
 * An exclusive create (O_EXCL) of a file holding the holder's pid and command, not proper-lockfile:
 * that library judges a lock stale by its age and keeps it fresh with a timer, so a killed holder
 * blocks the next start until the lock ages out, and a busy event loop (PGlite's migrations run on
 * it) can miss a refresh and lose the lock under a live process. A pid says at once whether the
 * holder lives, and names it in the refusal.
 */

/** Another live process holds the DATA_DIR. */
export class DataDirInUseError extends Error {}

const LOCK_FILE = 'embedded-database.lock';

interface LockHolder {
  pid: number;
  command: string;
  since: string;
}

/** The locks this process holds, by DATA_DIR, with how many databases of it are open: the three services open theirs at once. */
const held = new Map<string, number>();

/**
 * Holds the lock of `dataDir` for one more open database of this process, or throws DataDirInUseError
 * naming the live process that holds it. Answers the release, which frees the lock after the last one.
 */
export function holdDataDir(dataDir: string): () => void {
  const lockPath = path.join(dataDir, LOCK_FILE);
  if (!held.has(lockPath)) acquire(lockPath);
  held.set(lockPath, (held.get(lockPath) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (held.get(lockPath) ?? 1) - 1;
    if (left > 0) return void held.set(lockPath, left);
    held.delete(lockPath);
    rmSync(lockPath, { force: true });
  };
}

let releasingOnExit = false;

/** A process that ends without closing its databases (a failed start, process.exit) leaves no lock behind. */
function releaseOnExit(): void {
  if (releasingOnExit) return;
  releasingOnExit = true;
  process.once('exit', () => {
    for (const lockPath of held.keys()) rmSync(lockPath, { force: true });
  });
}

function acquire(lockPath: string): void {
  const holder: LockHolder = {
    pid: process.pid,
    command: process.argv.slice(1).join(' '),
    since: new Date().toISOString(),
  };
  for (let attempt = 1; ; attempt++) {
    try {
      const file = openSync(lockPath, 'wx');
      writeSync(file, `${JSON.stringify(holder)}\n`);
      closeSync(file);
      releaseOnExit();
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw error;
    }
    const current = readHolder(lockPath);
    if (current && isAlive(current.pid)) {
      throw new DataDirInUseError(
        `DATA_DIR ${path.dirname(lockPath)} is in use by another process (pid ${current.pid}: ${current.command}, since ${current.since}). ` +
          'Its embedded databases take one process at a time: stop that one first, or give this one another DATA_DIR ' +
          '(or use PostgreSQL, DATABASE_URL).',
      );
    }
    // Left by a process that was killed: set aside (a rename is atomic: of two processes that found it
    // stale, one moves it), then try again. What was moved is checked: when another process took the
    // stale lock over just before, its fresh lock goes back in place, and the next try names it.
    const setAside = `${lockPath}.stale-${process.pid}`;
    try {
      renameSync(lockPath, setAside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      continue;
    }
    const moved = readHolder(setAside);
    if (moved && moved.pid !== current?.pid && isAlive(moved.pid)) {
      try {
        linkSync(setAside, lockPath);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    rmSync(setAside, { force: true });
  }
}

/** The lock's holder, or undefined when the file is gone or unreadable (a holder killed while writing it). */
function readHolder(lockPath: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(lockPath, 'utf8')) as Partial<LockHolder>;
    return typeof holder.pid === 'number'
      ? { pid: holder.pid, command: String(holder.command), since: String(holder.since) }
      : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  // This very pid, not among the locks held: a restarted container's process got the pid of the one before.
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
