import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { raw } from '@mikro-orm/core';
import { PostgreSqlPlatform } from '@mikro-orm/postgresql';
import type { Orm } from '#lib/data/database.js';
import { bindParameters } from '#lib/data/postgresql.js';
import { Contact } from '#subgraphs/contacts/contact/contact.entity.js';
import { openContactsDatabase, type ContactsDatabase } from '#test/support/contacts-database.js';

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
  let database: ContactsDatabase;
  let orm: Orm;

  beforeAll(async () => {
    // One connection, so the prepared statements read below are those of the ORM's own queries.
    database = await openContactsDatabase({ DATABASE_POOL_MAX: '1' });
    orm = database.orm;
  });
  afterAll(() => database?.close());

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
