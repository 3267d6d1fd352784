import 'reflect-metadata';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { openDatabase, type Orm } from '#lib/data/database.js';
import { backupDataDir, requestBackup } from '#lib/data/embedded-backup.js';
import { runTask } from '#lib/process/main.js';

exitWithHelpIfAsked(`
usage: npm run backup -- --out FILE      (node dist/scripts/backup.js --out FILE)

Writes one consistent archive (a gzip'd tar) of the embedded DATA_DIR: each service's PGlite database,
every file of the file store, and the keys (secrets/, identity/). While npm start runs on DATA_DIR the
running process takes it (asked over DATA_DIR/backup.sock), with the platform serving throughout;
otherwise this command opens the databases itself. npm run restore -- FILE fills an empty DATA_DIR from it.
On PostgreSQL and S3 (DATABASE_URL, STORAGE_URL=s3://) use their own tools: docs/operations.md, Backups.
`);

const SERVICES = ['social', 'surveys', 'contacts'] as const;

void runTask('Backup', async (config, logger) => {
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  if (!values.out) throw new Error('--out FILE is required (npm run backup -- --out FILE)');
  if (config.env.DATABASE_URL)
    throw new Error(
      'DATABASE_URL is set: back up PostgreSQL with pg_dump, and S3 with its own tools (docs/operations.md)',
    );
  const out = path.resolve(values.out);
  let taken = await requestBackup(config.dataDir, out);
  if (!taken) {
    // Nothing runs on DATA_DIR: open its databases here (taking its lock), as they are, and archive them.
    const opened: Orm[] = [];
    try {
      for (const service of SERVICES)
        opened.push(await openDatabase(config, logger, { service, migrations: [], entities: [], schema: 'as-is' }));
      taken = await backupDataDir(config.dataDir, out);
    } finally {
      for (const orm of opened) await orm.close();
    }
  }
  console.log(`backed up ${config.dataDir} (databases: ${taken.databases.join(', ')}) to ${out}`);
});
