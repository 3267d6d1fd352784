import 'reflect-metadata';
import { openDatabase, pendingMigrations, type DatabaseOptions } from '#lib/data/database.js';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { runTask } from '#lib/process/main.js';
import { contactsMigrations } from '#subgraphs/contacts/migrations/index.js';
import { socialMigrations } from '#subgraphs/social/migrations/index.js';
import { surveysMigrations } from '#subgraphs/surveys/migrations/index.js';

/** Every service's database with its migrations; the migrations are SQL of their own, so no entity is needed to run them. */
const SERVICE_MIGRATIONS: Array<Pick<DatabaseOptions, 'service' | 'migrations'>> = [
  { service: 'social', migrations: socialMigrations },
  { service: 'surveys', migrations: surveysMigrations },
  { service: 'contacts', migrations: contactsMigrations },
];

exitWithHelpIfAsked(`
usage: npm run migrate [-- --check]      (node dist/scripts/migrate.js [--check])

Brings the database of every service (social, surveys, contacts) up to date and exits: 0 when done,
1 naming the problem. The database is DATABASE_URL's PostgreSQL, or embedded PGlite under DATA_DIR.
It migrates whatever MIGRATE_ON_START says: with MIGRATE_ON_START=false this is the one step that does
(the Kubernetes Job, the compose migrate service), run before a release's parts start.
On PostgreSQL, safe beside running parts: whoever migrates holds the same lock. Embedded PGlite takes
one process at a time: while npm start runs on DATA_DIR this refuses, naming it.

  --check   changes nothing: lists the migrations not run yet, one line each (service and name), and
            exits 1 when there are any, 0 when every database is up to date.
`);

const checkOnly = process.argv.slice(2).includes('--check');

/**
 * `npm run migrate` (`node dist/scripts/migrate.js`): brings every service's database up to date and
 * exits, as the Kubernetes Job and the compose `migrate` service run it before the parts. Parts with
 * `MIGRATE_ON_START=true` migrate on start too; on PostgreSQL the advisory lock in openDatabase makes
 * whoever comes second wait and find nothing left to do, and on embedded PGlite the DATA_DIR lock
 * refuses a second process.
 */
void runTask(checkOnly ? 'Migration check' : 'Migrations', async (config, logger) => {
  let pending = 0;
  for (const { service, migrations } of SERVICE_MIGRATIONS) {
    const orm = await openDatabase(config, logger, {
      service,
      migrations,
      entities: [],
      schema: checkOnly ? 'as-is' : 'migrate',
    });
    try {
      if (checkOnly) {
        const names = await pendingMigrations(orm, service);
        for (const name of names) console.log(`pending ${service} ${name}`);
        pending += names.length;
      }
    } finally {
      await orm.close();
    }
  }
  if (pending) throw new Error(`${pending} migrations not run yet (listed above): run npm run migrate`);
  if (checkOnly) console.log('every database is up to date');
  else logger.info('every database is up to date');
});
