import 'reflect-metadata';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '#lib/config.js';
import { EMBEDDED_SHARED_BUFFERS, openDatabase, type DatabaseOptions, type Orm } from '#lib/data/database.js';
import { createLogger } from '#lib/observability/logger.js';
import { contactsEntities } from '#subgraphs/contacts/contacts.entities.js';
import { contactsMigrations } from '#subgraphs/contacts/migrations/index.js';
import { socialMigrations } from '#subgraphs/social/migrations/index.js';
import { surveysMigrations } from '#subgraphs/surveys/migrations/index.js';
import { LogCollector } from '#test/support/logs.js';

const SERVICES: Pick<DatabaseOptions, 'service' | 'migrations'>[] = [
  { service: 'contacts', migrations: contactsMigrations },
  { service: 'social', migrations: socialMigrations },
  { service: 'surveys', migrations: surveysMigrations },
];

/** A cluster's system identifier: the first 8 bytes of global/pg_control, drawn at random by each initdb. */
const systemIdentifier = (cluster: string) =>
  readFileSync(path.join(cluster, 'global', 'pg_control'))
    .subarray(0, 8)
    .toString('hex');

describe('the embedded databases of a new DATA_DIR', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'embedded-database-test-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'info', LOG_FORMAT: 'json' });
  const creating = (logs: LogCollector) =>
    logs.lines.filter((line) => String(line.msg).startsWith('creating the embedded database'));

  it('are copies of one empty cluster (one initdb, not three), each migrated and kept apart', async () => {
    const logs = new LogCollector();
    const logger = createLogger(config, logs);
    const orms: Orm[] = await Promise.all(
      SERVICES.map((options) => openDatabase(config, logger, { ...options, entities: [] })),
    );
    try {
      const clusters = SERVICES.map(({ service }) => path.join(dataDir, 'pglite', service));
      const identifiers = new Set(clusters.map(systemIdentifier));
      expect(identifiers.size).toBe(1);
      expect(identifiers.has(systemIdentifier(path.join(dataDir, 'pglite', '.empty')))).toBe(true);
      expect(existsSync(path.join(dataDir, 'pglite', '.empty.creating'))).toBe(false);
      // Each service says once that it creates its database, and has its own tables only.
      expect(
        creating(logs)
          .map((line) => line.component as string)
          .sort(),
      ).toEqual(['contacts-db', 'social-db', 'surveys-db']);
      for (const [index, orm] of orms.entries()) {
        const schemas = await orm.em
          .getConnection()
          .execute<{ schema_name: string }[]>(
            `select schema_name from information_schema.schemata where schema_name in ('contacts', 'social', 'surveys')`,
          );
        expect(schemas.map((row) => row.schema_name)).toEqual([SERVICES[index].service]);
      }
    } finally {
      await Promise.all(orms.map((orm) => orm.close()));
    }
    // Opened again: nothing created, the data still there.
    const again = new LogCollector();
    const contacts = await openDatabase(config, createLogger(config, again), {
      ...SERVICES[0],
      entities: contactsEntities,
    });
    try {
      expect(creating(again)).toEqual([]);
      const [row] = await contacts.em
        .getConnection()
        .execute<{ n: number }[]>('select count(*)::int as n from contacts.mikro_orm_migrations');
      expect(row.n).toBe(contactsMigrations.length);
      // initdb's 128 MB buffer pool, touched whole by the WASM instance, was most of each cluster's memory.
      const [setting] = await contacts.em
        .getConnection()
        .execute<{ shared_buffers: string }[]>(`select current_setting('shared_buffers') as shared_buffers`);
      expect(setting.shared_buffers).toBe(EMBEDDED_SHARED_BUFFERS);
    } finally {
      await contacts.close();
    }
  });
});
