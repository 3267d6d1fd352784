import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { extract } from 'tar';
import { ARCHIVED_DATABASES } from './embedded-backup.js';

/**
 * Fills an empty `dataDir` from an archive of `npm run backup`: its files and keys as they were, and
 * each service's embedded database made again from its dump (PGlite's `loadDataDir`). A folder that
 * holds anything is refused: a restore never mixes with data already there.
 */
export async function restoreDataDir(archive: string, dataDir: string): Promise<{ databases: string[] }> {
  if (existsSync(dataDir) && readdirSync(dataDir).length)
    throw new Error(`${dataDir} is not empty: a restore fills an empty DATA_DIR only (move it aside, or name another)`);
  if (!existsSync(archive)) throw new Error(`${archive} does not exist`);
  mkdirSync(dataDir, { recursive: true });
  await extract({ file: archive, cwd: dataDir, strict: true });
  const dumps = path.join(dataDir, ARCHIVED_DATABASES);
  if (!existsSync(dumps)) throw new Error(`${archive} is not an archive of npm run backup (no ${ARCHIVED_DATABASES}/)`);
  const { PGlite } = await import('@electric-sql/pglite');
  const databases: string[] = [];
  for (const name of readdirSync(dumps).sort()) {
    const service = /^([a-z]+)\.tar$/.exec(name)?.[1];
    if (!service)
      throw new Error(`${archive} holds ${ARCHIVED_DATABASES}/${name}, which is no database of the platform`);
    const folder = path.join(dataDir, 'pglite', service);
    mkdirSync(folder, { recursive: true });
    const database = await PGlite.create(folder, { loadDataDir: new Blob([readFileSync(path.join(dumps, name))]) });
    await database.close();
    databases.push(service);
  }
  rmSync(dumps, { recursive: true, force: true });
  return { databases };
}
