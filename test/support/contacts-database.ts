import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '#lib/config.js';
import { openDatabase, type Orm } from '#lib/data/database.js';
import { createLogger } from '#lib/observability/logger.js';
import { contactsEntities } from '#subgraphs/contacts/contacts.entities.js';
import { contactsMigrations } from '#subgraphs/contacts/migrations/index.js';
import { createTestDatabase } from './platform.js';

/** The contacts service's database alone, migrated: real tables for the tests of lib/data. */
export interface ContactsDatabase {
  orm: Orm;
  close(): Promise<void>;
}

/**
 * Opens it on a new test database (PostgreSQL when TEST_DATABASE_URL is set, else embedded PGlite in a
 * new DATA_DIR); `settings` add to or override the configuration.
 */
export async function openContactsDatabase(settings: Record<string, string> = {}): Promise<ContactsDatabase> {
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'contacts-database-'));
  const config = loadConfig({
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...settings,
  });
  const orm = await openDatabase(config, createLogger(config), {
    service: 'contacts',
    entities: contactsEntities,
    migrations: contactsMigrations,
  });
  return {
    orm,
    async close() {
      await orm.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
