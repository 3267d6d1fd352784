import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { create } from 'tar';

/**
 * Backups of an embedded DATA_DIR while the platform runs. Only the process holding the DATA_DIR lock
 * (lib/data/data-dir-lock.ts) may open its PGlite databases, so that process takes the backup: while it
 * has embedded databases open it listens on `DATA_DIR/backup.sock`, a Unix socket only those who may read
 * DATA_DIR can reach, and `npm run backup` asks it there. A process-wide registry knows each open database's
 * dump (PGlite's `dumpDataDir`, taken under the connection's lock, so no statement of the platform runs
 * during it and each database is copied as of one moment).
 */

export const BACKUP_SOCKET = 'backup.sock';
/** Where the databases lie in an archive: one PGlite data folder tarball per service. */
export const ARCHIVED_DATABASES = 'databases';
/** What of DATA_DIR an archive leaves out: the databases' live folders (copied by their dumps instead) and this process's lock and socket. */
const NOT_ARCHIVED = new Set(['pglite', 'embedded-database.lock', BACKUP_SOCKET]);

type Dump = () => Promise<Blob>;

interface OpenDataDir {
  dumps: Map<string, Dump>;
  server: net.Server;
}

const open = new Map<string, OpenDataDir>();

/**
 * Makes `service`'s embedded database part of `dataDir`'s backups for as long as it is open; the first
 * one opens the backup socket. Returns the unregistering, which closes the socket after the last.
 */
export function registerEmbeddedDatabase(dataDir: string, service: string, dump: Dump): () => Promise<void> {
  let entry = open.get(dataDir);
  if (!entry) {
    entry = { dumps: new Map(), server: listenForBackups(dataDir) };
    open.set(dataDir, entry);
  }
  entry.dumps.set(service, dump);
  return async () => {
    const current = open.get(dataDir);
    if (!current?.dumps.delete(service) || current.dumps.size) return;
    open.delete(dataDir);
    await new Promise<void>((resolve) => current.server.close(() => resolve()));
  };
}

/** Writes one archive of `dataDir` (gzip'd tar) to `out`: each open database's dump, then every other file and key. */
export async function backupDataDir(dataDir: string, out: string): Promise<{ databases: string[] }> {
  const entry = open.get(dataDir);
  if (!entry) throw new Error(`no embedded database of ${dataDir} is open in this process`);
  const staging = mkdtempSync(path.join(os.tmpdir(), 'platform-backup-'));
  try {
    mkdirSync(path.join(staging, ARCHIVED_DATABASES));
    // Databases first: a file an archived row points at was written before the row committed, so it is there when the files are copied next.
    for (const [service, dump] of entry.dumps) {
      const tarball = Buffer.from(await (await dump()).arrayBuffer());
      writeFileSync(path.join(staging, ARCHIVED_DATABASES, `${service}.tar`), tarball);
    }
    // Then every other file and key (storage, secrets, the development issuer's keys), as they are now.
    const rest = readdirSync(dataDir).filter((name) => !NOT_ARCHIVED.has(name));
    for (const name of rest) cpSync(path.join(dataDir, name), path.join(staging, name), { recursive: true });
    await create({ file: out, gzip: true, cwd: staging, portable: true }, [ARCHIVED_DATABASES, ...rest]);
    return { databases: [...entry.dumps.keys()].sort() };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** The request `npm run backup` sends over the socket, one JSON line, and the answer, one JSON line. */
interface BackupRequest {
  out: string;
}
type BackupAnswer = { databases: string[] } | { error: string };

/** Serves `DATA_DIR/backup.sock`: each connection asks for one archive at an absolute path. */
function listenForBackups(dataDir: string): net.Server {
  const socketPath = path.join(dataDir, BACKUP_SOCKET);
  // A socket left by a process that was killed answers nobody; this process holds the lock now.
  rmSync(socketPath, { force: true });
  const server = net.createServer((connection) => {
    let text = '';
    connection.on('data', (chunk) => {
      text += chunk.toString();
      if (!text.includes('\n')) return;
      const answer = (body: BackupAnswer) => connection.end(`${JSON.stringify(body)}\n`);
      let request: BackupRequest;
      try {
        request = JSON.parse(text) as BackupRequest;
      } catch {
        return answer({ error: 'not a backup request' });
      }
      if (!path.isAbsolute(request.out)) return answer({ error: 'out must be an absolute path' });
      backupDataDir(dataDir, request.out).then(answer, (error: Error) => answer({ error: error.message }));
    });
    connection.on('error', () => connection.destroy());
  });
  server.listen(socketPath);
  // Nothing else waits on it: it must not keep a process alive that is otherwise done.
  server.unref();
  return server;
}

/**
 * Asks the process that has `dataDir`'s databases open for an archive at `out`. Answers undefined when
 * no process listens (the platform is not running), so the caller opens the databases itself.
 */
export function requestBackup(dataDir: string, out: string): Promise<{ databases: string[] } | undefined> {
  return new Promise((resolve, reject) => {
    const connection = net.connect(path.join(dataDir, BACKUP_SOCKET));
    let text = '';
    connection.on('connect', () => connection.write(`${JSON.stringify({ out } satisfies BackupRequest)}\n`));
    connection.on('data', (chunk) => (text += chunk.toString()));
    connection.on('end', () => {
      try {
        const answer = JSON.parse(text) as BackupAnswer;
        if ('error' in answer) reject(new Error(`the running platform could not back up: ${answer.error}`));
        else resolve(answer);
      } catch {
        reject(new Error('the running platform closed the backup connection without an answer'));
      }
    });
    connection.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') resolve(undefined);
      else reject(error);
    });
  });
}
