import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { raw } from '@mikro-orm/core';
import { PostgreSqlPlatform } from '@mikro-orm/postgresql';
import { loadConfig } from '../../../lib/config.js';
import { openDatabase, type Orm } from '../../../lib/data/database.js';
import { createLogger } from '../../../lib/observability/logger.js';
import { bindParameters } from '../../../lib/data/postgresql.js';
import { Contact } from '../../../subgraphs/contacts/contact.entity.js';
import { contactsEntities } from '../../../subgraphs/contacts/contacts.entities.js';
import { contactsMigrations } from '../../../subgraphs/contacts/migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../../support/platform.js';

describe('bind parameters instead of values in the SQL text', () => {
  const platform = new PostgreSqlPlatform();

  it('turns MikroORM placeholders into $n and keeps identifiers, escapes, lists and raw fragments in place', () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const bound = bindParameters(
      platform,
      'select ?? from t where a = ? and b in (?) and c \\? ? and d > ? and e = ?',
      ['col', "O'Brien", ['x', 'y'], raw('lower(?)', ['Z']), at, { k: 1 }],
    );
    expect(bound.text).toBe(
      'select "col" from t where a = $1 and b in ($2, $3) and c ? lower($4) and d > $5 and e = $6',
    );
    expect(bound.values).toEqual(["O'Brien", 'x', 'y', 'Z', platform.formatDate(at), '{"k":1}']);
  });

  it('leaves a statement without values as it is', () => {
    expect(bindParameters(platform, 'select 1', [])).toEqual({ text: 'select 1', values: [] });
  });
});

const server = process.env.TEST_DATABASE_URL;

(server ? describe : describe.skip)('on PostgreSQL', () => {
  let database: TestDatabase;
  let orm: Orm;
  let dataDir: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'bind-test-'));
    // One connection, so the prepared statements read below are those of the ORM's own queries.
    const config = loadConfig({
      DATABASE_URL: database.url,
      DATABASE_POOL_MAX: '1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
    });
    orm = await openDatabase(config, createLogger(config), {
      service: 'contacts',
      entities: contactsEntities,
      migrations: contactsMigrations,
    });
  });
  afterAll(async () => {
    await orm?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sends the ORM statements as named prepared statements, with the values apart from the text', async () => {
    const contact = Object.assign(new Contact(), { firstName: "Ada O'Brien", tags: ['vip'] });
    await orm.em.fork().persist(contact).flush();
    const found = await orm.em.fork().findOne(Contact, { id: contact.id, deleted: false });
    expect(found?.firstName).toBe("Ada O'Brien");
    expect(found?.tags).toEqual(['vip']);

    const prepared = await orm.em
      .fork()
      .execute<{ statement: string }[]>('select statement from pg_prepared_statements');
    const texts = prepared.map((row) => row.statement);
    expect(
      texts.some((text) => /^select .* from "contacts"\."contact" as "c0" where "c0"\."id" = \$1/.test(text)),
    ).toBe(true);
    expect(texts.some((text) => /^insert into "contacts"\."contact"/.test(text))).toBe(true);
    expect(texts.join('\n')).not.toContain(contact.id);
    expect(texts.join('\n')).not.toContain('Brien');
  });
});
