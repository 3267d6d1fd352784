import path from 'node:path';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { restoreDataDir } from '#lib/data/embedded-restore.js';
import { runTask } from '#lib/process/main.js';

exitWithHelpIfAsked(`
usage: npm run restore -- FILE      (node dist/scripts/restore.js FILE)

Fills an empty DATA_DIR from an archive of npm run backup: the embedded databases, the file store and the
keys, as they were when it was taken. A DATA_DIR that holds anything is refused. Then npm start on it.
`);

void runTask('Restore', async (config) => {
  const file = process.argv.slice(2).find((arg) => !arg.startsWith('-'));
  if (!file) throw new Error('the archive is required (npm run restore -- FILE)');
  const { databases } = await restoreDataDir(path.resolve(file), config.dataDir);
  console.log(`restored ${config.dataDir} (databases: ${databases.join(', ')}) from ${path.resolve(file)}`);
});
