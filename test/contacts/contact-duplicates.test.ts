import 'reflect-metadata';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DuplicateService, PAIRS_LOCK } from '#subgraphs/contacts/duplicates/duplicate.service.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

describe.each([
  { label: 'PostgreSQL (or PGlite when TEST_DATABASE_URL is unset)', embedded: false },
  { label: 'embedded PGlite', embedded: true },
])('contact duplicates on $label', ({ embedded }) => {
  let platform: TestPlatform;
  let base: string;
  let statements: string[] = [];
  const ids: Record<string, string> = {};

  const create = async (key: string, body: Record<string, unknown>) => {
    const res = await rest('POST', `${base}/api/contacts`, body);
    expect(res.status).toBe(201);
    ids[key] = res.body.id;
  };
  const duplicatesOf = async (key: string) => {
    const res = await rest('GET', `${base}/api/contacts/${ids[key]}/duplicates`);
    expect(res.status).toBe(200);
    return res.body.data as { contact: { id: string }; score: number; reasons: string[] }[];
  };
  const service = () => new DuplicateService(platform.subgraphs.contacts.orm.em.fork());
  const found = <Item extends { contact: { id: string } }>(list: Item[], key: string) =>
    list.find((item) => item.contact.id === ids[key]);

  beforeAll(async () => {
    platform = await startTestPlatform(
      {},
      { embedded, onQuery: (service, sql) => service === 'contacts' && statements.push(stripVTControlCharacters(sql)) },
    );
    base = platform.urls.contactsRest;
    await create('gmail', { firstName: 'Ada', lastName: 'Lovelace', email: 'Ada.Lovelace+crm@gmail.com' });
    await create('googlemail', { firstName: 'Augusta', lastName: 'King', email: 'adalovelace@googlemail.com' });
    await create('phone', { firstName: 'Grace', lastName: 'Hopper', phone: '+1 (415) 555-0100' });
    await create('phone2', { firstName: 'G.', lastName: 'Murray', phone: '+14155550100' });
    await create('name', { firstName: 'Jonathan', lastName: 'Smith', company: 'Acme' });
    await create('typo', { firstName: 'jonathon', lastName: 'smith', company: 'ACME' });
    await create('accent', { firstName: 'Zoë', lastName: 'Ångström' });
    await create('plain', { firstName: 'Zoe', lastName: 'Angstrom' });
    await create('unrelated', {
      firstName: 'Unrelated',
      lastName: 'Person',
      email: 'someone@example.org',
      phone: '+44 20 7946 0000',
    });
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('matches e-mail addresses once normalised (case, Gmail dots and +tags, googlemail)', async () => {
    const list = await duplicatesOf('gmail');
    expect(found(list, 'googlemail')).toMatchObject({ reasons: ['email'] });
    expect(found(list, 'googlemail')!.score).toBeGreaterThanOrEqual(0.9);
    expect(found(list, 'unrelated')).toBeUndefined();
  });

  it('matches phone numbers once normalised to E.164', async () => {
    const list = await duplicatesOf('phone');
    expect(found(list, 'phone2')).toMatchObject({ reasons: ['phone'] });
    expect(found(list, 'unrelated')).toBeUndefined();
  });

  it('matches names despite case, accents and a typo, higher with the same company', async () => {
    const typo = found(await duplicatesOf('name'), 'typo')!;
    expect(typo.reasons).toEqual(['name', 'company']);
    const accent = found(await duplicatesOf('accent'), 'plain')!;
    expect(accent.reasons).toEqual(['name']);
    expect(typo.score).toBeGreaterThan(accent.score - 0.2);
    expect(typo.score).toBeGreaterThanOrEqual(0.6);
    expect(accent.score).toBeLessThan(0.6);
    expect(await duplicatesOf('unrelated')).toEqual([]);
    // A first name mistyped at no company is found too (first and last name compared apart), below the same company's score.
    await create('elsewhere', { firstName: 'Johnathan', lastName: 'Smith' });
    const elsewhere = found(await duplicatesOf('name'), 'elsewhere')!;
    expect(elsewhere.reasons).toEqual(['name']);
    expect(elsewhere.score).toBeLessThan(typo.score);
  });

  it('scores colleagues named alike lower: each has an e-mail address of their own, evidence of two people', async () => {
    await create('colleague1', {
      firstName: 'Peter',
      lastName: 'Gibbons',
      company: 'Initech',
      email: 'peter@initech.example',
    });
    await create('colleague2', {
      firstName: 'Peter',
      lastName: 'Gibbon',
      company: 'Initech',
      email: 'pg@initech.example',
    });
    const colleague = found(await duplicatesOf('colleague1'), 'colleague2')!;
    expect(colleague.reasons).toEqual(['name', 'company']);
    expect(colleague.score).toBeGreaterThanOrEqual(0.3);
    expect(colleague.score).toBeLessThan(0.6);
  });

  it('answers Contact.duplicates in GraphQL with upper-case reasons, and 404 for an unknown contact in REST', async () => {
    const res = await graphql<any>(
      platform.urls.gateway,
      'query ($id: ID!) { contact(id: $id) { duplicates(first: 5) { contact { id } score reasons } } }',
      { id: ids.phone },
    );
    expect(res.body.data.contact.duplicates).toEqual([
      { contact: { id: ids.phone2 }, score: expect.any(Number), reasons: ['PHONE'] },
    ]);
    const unknown = await rest('GET', `${base}/api/contacts/00000000-0000-4000-8000-000000000000/duplicates`);
    expect(unknown.status).toBe(404);
  });

  it('pages the pairs of the whole book, best first, name-only pairs left out', async () => {
    const res = await rest('GET', `${base}/api/contacts/duplicates?limit=2`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ page: 1, limit: 2, total: 3 });
    const pairOf = (a: string, b: string) => [ids[a], ids[b]].sort();
    const all = (await rest('GET', `${base}/api/contacts/duplicates`)).body.data as {
      contacts: { id: string }[];
      score: number;
    }[];
    expect(all.map((pair) => pair.contacts.map((c) => c.id).sort())).toEqual(
      expect.arrayContaining([pairOf('gmail', 'googlemail'), pairOf('phone', 'phone2'), pairOf('name', 'typo')]),
    );
    expect(all.map((pair) => pair.score)).toEqual([...all.map((pair) => pair.score)].sort((a, b) => b - a));

    const first = await graphql<any>(
      platform.urls.gateway,
      '{ contactDuplicates(first: 2) { totalCount edges { cursor node { score reasons contacts { id } } } pageInfo { hasNextPage endCursor } } }',
    );
    const page = first.body.data.contactDuplicates;
    expect(page.totalCount).toBe(3);
    expect(page.pageInfo.hasNextPage).toBe(true);
    const next = await graphql<any>(
      platform.urls.gateway,
      'query ($after: String) { contactDuplicates(first: 2, after: $after) { nodes { contacts { id } } pageInfo { hasNextPage } } }',
      { after: page.pageInfo.endCursor },
    );
    expect(next.body.data.contactDuplicates.nodes).toHaveLength(1);
    // Back from the end: the last page, then the pair before the first page's end, in the same order.
    const back = async (variables: Record<string, unknown>) =>
      (
        await graphql<any>(
          platform.urls.gateway,
          `
            query ($last: Int, $before: String) {
              contactDuplicates(last: $last, before: $before) {
                edges {
                  cursor
                }
                pageInfo {
                  hasNextPage
                  hasPreviousPage
                }
              }
            }
          `,
          variables,
        )
      ).body.data.contactDuplicates;
    const last = await back({ last: 2 });
    expect(last.edges.map((edge: any) => edge.cursor)).toEqual([page.edges[1].cursor, expect.any(String)]);
    expect(last.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true });
    const before = await back({ last: 2, before: page.edges[1].cursor });
    expect(before.edges.map((edge: any) => edge.cursor)).toEqual([page.edges[0].cursor]);
    expect(before.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false });
    const bad = await graphql<any>(platform.urls.gateway, '{ contactDuplicates(after: "nope") { totalCount } }');
    expect(bad.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    const both = await graphql<any>(platform.urls.gateway, '{ contactDuplicates(first: 1, last: 1) { totalCount } }');
    expect(both.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('keeps the book current: a new duplicate shows after a refresh, a deleted one at once', async () => {
    await create('late', { firstName: 'Late', phone: '0044 20 7946 0000' });
    await service().refreshPairs();
    const total = async () => (await rest('GET', `${base}/api/contacts/duplicates`)).body.total;
    expect(await total()).toBe(4);
    await rest('DELETE', `${base}/api/contacts/${ids.late}`);
    expect(await total()).toBe(3);
  });

  it('keeps the book current from the contacts changed since: the same pairs as the whole book computed again', async () => {
    const pairs = async () =>
      (
        await platform.subgraphs.contacts.orm.em
          .fork()
          .execute<{ a_id: string; b_id: string; score: number }[]>(
            'select a_id, b_id, score from contacts.contact_duplicate_pair order by a_id, b_id',
          )
      ).map((pair) => ({ ...pair, score: Number(pair.score) }));
    await service().refreshPairs(true);
    const before = await pairs();
    // One contact now shares a phone with another; one no longer shares its name and company.
    await create('joins', { firstName: 'Joins', lastName: 'Later', phone: '(415) 555-0100' });
    const put = await rest('PUT', `${base}/api/contacts/${ids.typo}`, {
      firstName: 'Other',
      lastName: 'Person',
      company: 'Acme',
    });
    expect(put.status).toBe(200);
    statements = [];
    expect(await service().refreshPairs()).toBe(true);
    expect(statements.some((sql) => /delete from "contacts"."contact_duplicate_pair" where a_id in/.test(sql))).toBe(
      true,
    );
    expect(statements.some((sql) => /^delete from "contacts"."contact_duplicate_pair"$/.test(sql.trim()))).toBe(false);
    const changed = await pairs();
    expect(changed).not.toEqual(before);
    expect(changed.some((pair) => [pair.a_id, pair.b_id].includes(ids.joins))).toBe(true);
    expect(changed.some((pair) => [pair.a_id, pair.b_id].includes(ids.typo))).toBe(false);
    await service().refreshPairs(true);
    expect(await pairs()).toEqual(changed);
    // The changes of the last minute are looked at again by the next refresh (one may have committed late): the same pairs.
    await service().refreshPairs();
    expect(await pairs()).toEqual(changed);
    // Once no contact changed since the time a refresh looks from, it writes nothing.
    await platform.subgraphs.contacts.orm.em
      .fork()
      .execute(`update contacts.contact_duplicate_state set changes_from = now() + interval '1 minute'`);
    expect(await service().refreshPairs()).toBe(false);
  });

  // Two refreshes need two connections: PGlite has one.
  const onServer = !embedded && Boolean(process.env.TEST_DATABASE_URL);
  (onServer ? it : it.skip)(
    'lets the background refresh give way to one running elsewhere, and a forced one wait for it',
    async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const taken = new Promise<void>((resolve) => (locked = resolve));
      // Another instance's refresh, as far as this one can tell: the lock held in a transaction of its own.
      const other = platform.subgraphs.contacts.orm.em.fork().transactional(async (tx) => {
        await tx.execute(`select pg_advisory_xact_lock(${PAIRS_LOCK})`);
        locked();
        await held;
      });
      await taken;
      // A contact changed since the last refresh: without the lock, the background would refresh now.
      await platform.subgraphs.contacts.orm.em
        .fork()
        .execute(`update contacts.contact_duplicate_state set changes_from = now() - interval '1 minute'`);
      await create('during', { firstName: 'During', phone: '+1 415 555 0199' });
      expect(await service().refreshPairs()).toBe(false);
      let forcedDone = false;
      const forced = service()
        .refreshPairs(true)
        .then((wrote) => {
          forcedDone = true;
          return wrote;
        });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(forcedDone).toBe(false);
      release();
      await other;
      expect(await forced).toBe(true);
    },
  );

  it('matches contacts written by the bulk import as any others: the keys are index expressions, kept on every write path', async () => {
    const form = new FormData();
    const csv = 'First Name,Last Name,Email,Phone\nImported,Person,grace.hopper+import@gmail.com,+44 20 7946 0000\n';
    form.append('file', new Blob([csv], { type: 'text/csv' }), 'contacts.csv');
    const imported = await fetch(`${base}/api/contacts/import`, { method: 'POST', body: form });
    expect(imported.status).toBe(200);
    expect(((await imported.json()) as { created: number }).created).toBe(1);
    const list = await duplicatesOf('unrelated');
    expect(list.map((item) => item.reasons)).toEqual([['phone']]);
    await create('hopper', { firstName: 'Grace', email: 'gracehopper@gmail.com' });
    expect((await duplicatesOf('hopper')).map((item) => item.reasons)).toEqual([['email']]);
  });

  it('reads a page of the book pairs in the same statements whatever its size', async () => {
    const page = (limit: number) => rest('GET', `${base}/api/contacts/duplicates?limit=${limit}`);
    await page(1);
    statements = [];
    await page(1);
    const one = statements.length;
    statements = [];
    expect((await page(20)).body.data.length).toBeGreaterThan(1);
    expect(statements.length).toBe(one);
  });

  it('finds the duplicates of a list of contacts in a fixed number of statements', async () => {
    const query = (first: number) =>
      graphql<any>(
        platform.urls.gateway,
        `{ contacts(first: ${first}) { nodes { id duplicates { contact { id } score reasons } } } }`,
      );
    statements = [];
    await query(2);
    const few = statements.length;
    statements = [];
    const res = await query(9);
    expect(res.body.data.contacts.nodes).toHaveLength(9);
    expect(statements.length).toBe(few);
  });
});
