import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

describe.each([
  { label: 'PostgreSQL (or PGlite when TEST_DATABASE_URL is unset)', embedded: false },
  { label: 'embedded PGlite', embedded: true },
])('contact merge and undo on $label', ({ embedded }) => {
  let platform: TestPlatform;
  let base: string;
  let stageIds: string[];

  const create = async (body: Record<string, unknown>) => {
    const res = await rest('POST', `${base}/api/contacts`, body);
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const note = async (contactId: string, body: string) =>
    expect((await rest('POST', `${base}/api/contacts/${contactId}/notes`, { body })).status).toBe(201);
  const attach = async (contactId: string, text: string) => {
    const form = new FormData();
    form.append('file', new Blob([text], { type: 'text/plain' }), `${text}.txt`);
    const res = await fetch(`${base}/api/contacts/${contactId}/attachments`, { method: 'POST', body: form });
    expect(res.status).toBe(201);
  };
  const move = async (contactId: string, stageId: string) =>
    expect((await rest('PUT', `${base}/api/pipeline/${contactId}/move`, { stageId })).status).toBe(200);
  const totals = async (contactId: string) => ({
    notes: (await rest('GET', `${base}/api/contacts/${contactId}/notes`)).body.total,
    attachments: (await rest('GET', `${base}/api/contacts/${contactId}/attachments`)).body.total,
    history: (await rest('GET', `${base}/api/pipeline/${contactId}/history`)).body.total,
  });
  const contact = async (id: string) => (await rest('GET', `${base}/api/contacts/${id}`)).body;
  const merge = (survivorId: string, body: Record<string, unknown>) =>
    rest('POST', `${base}/api/contacts/${survivorId}/merge`, body);

  beforeAll(async () => {
    platform = await startTestPlatform({}, { embedded });
    base = platform.urls.contactsRest;
    const pipelines = await rest('GET', `${base}/api/pipeline`);
    stageIds = pipelines.body.data[0].stages.map((stage: { id: string }) => stage.id);
  });
  afterAll(async () => {
    await platform?.stop();
  });

  /** A survivor without e-mail, stage or company, and two contacts to merge into it with notes, files and history. */
  async function threeContacts(tag: string) {
    const survivor = await create({ firstName: 'Ada', tags: ['vip'] });
    const a = await create({
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: `ada.${tag}@example.com`,
      phone: '+44 20 1',
    });
    const b = await create({ firstName: 'Augusta', company: 'Analytical', phone: '+44 20 2', tags: ['vip', 'press'] });
    await note(a, 'first note');
    await note(a, 'second note');
    await note(b, 'note of b');
    await attach(a, 'engine');
    await move(a, stageIds[1]);
    await move(a, stageIds[2]);
    return { survivor, a, b };
  }

  it('merges: fields by fieldSources, empty ones filled in order, tags joined, everything moved, one MERGED event', async () => {
    const { survivor, a, b } = await threeContacts('merge');
    const before = await graphql<any>(platform.urls.gateway, '{ contactEvents(last: 1) { edges { cursor } } }');
    const after = before.body.data.contactEvents.edges[0]?.cursor ?? null;

    const res = await merge(survivor, { mergeIds: [a, b], fieldSources: { phone: b } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: survivor,
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada.merge@example.com',
      phone: '+44 20 2',
      company: 'Analytical',
      tags: ['vip', 'press'],
      deleted: false,
      mergedInto: null,
      merge: {
        id: expect.any(String),
        survivorId: survivor,
        mergedIds: [a, b],
        createdAt: expect.any(String),
        undoneAt: null,
      },
    });
    expect(await totals(survivor)).toEqual({ notes: 3, attachments: 1, history: 2 });
    // A merged contact is deleted (its lists answer 404): nothing of it is left behind in the tables.
    for (const table of ['note', 'attachment', 'stage_move']) {
      const [row] = await platform.subgraphs.contacts.orm.em
        .fork()
        .execute(`select count(*)::int as n from contacts.${table} where contact_id = ?`, [a]);
      expect(row.n).toBe(0);
    }
    // The survivor had no stage: it takes the first merged contact's.
    const placed = await graphql<any>(platform.urls.gateway, 'query ($id: ID!) { contact(id: $id) { id mergedIds } }', {
      id: survivor,
    });
    expect(placed.body.data.contact.mergedIds.sort()).toEqual([a, b].sort());

    expect(await contact(a)).toMatchObject({
      id: a,
      deleted: true,
      mergedInto: survivor,
      email: 'ada.merge@example.com',
    });
    const byGraph = await graphql<any>(
      platform.urls.gateway,
      'query ($id: ID!) { contact(id: $id) { deleted mergedInto } }',
      {
        id: b,
      },
    );
    expect(byGraph.body.data.contact).toEqual({ deleted: true, mergedInto: survivor });
    const list = await rest('GET', `${base}/api/contacts?search=augusta`);
    expect(list.body.total).toBe(0);

    const events = await graphql<any>(
      platform.urls.gateway,
      'query ($after: String) { contactEvents(first: 50, after: $after) { nodes { type contactId } } }',
      { after },
    );
    expect(events.body.data.contactEvents.nodes.filter((event: { type: string }) => event.type === 'MERGED')).toEqual([
      { type: 'MERGED', contactId: survivor },
    ]);
  });

  it('answers a merge and an undo sent again with the same Idempotency-Key as the first time, changing nothing', async () => {
    const { survivor, a } = await threeContacts('replayed');
    const key = { 'idempotency-key': crypto.randomUUID() };
    const first = await rest('POST', `${base}/api/contacts/${survivor}/merge`, { mergeIds: [a] }, key);
    expect(first.status).toBe(200);
    const again = await rest('POST', `${base}/api/contacts/${survivor}/merge`, { mergeIds: [a] }, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const undoKey = { 'idempotency-key': crypto.randomUUID() };
    const undo = `${base}/api/contacts/merges/${first.body.merge.id}/undo`;
    expect((await rest('POST', undo, undefined, undoKey)).status).toBe(200);
    const replayed = await rest('POST', undo, undefined, undoKey);
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  });

  it('answers a dry run with the survivor as it would be, and writes nothing', async () => {
    const { survivor, a, b } = await threeContacts('dry');
    const was = await contact(survivor);
    const res = await merge(survivor, { mergeIds: [b, a], dryRun: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: survivor,
      lastName: 'Lovelace',
      company: 'Analytical',
      phone: '+44 20 2',
      merge: null,
    });
    expect(await contact(survivor)).toEqual(was);
    expect(await contact(a)).toMatchObject({ deleted: false, mergedInto: null });
    expect(await totals(a)).toEqual({ notes: 2, attachments: 1, history: 2 });
    expect(await totals(survivor)).toEqual({ notes: 0, attachments: 0, history: 0 });
  });

  it('refuses itself, unknown, deleted, already merged, none and more than 49 with a 400 naming mergeIds, changing nothing', async () => {
    const survivor = await create({ firstName: 'Refusing' });
    const deleted = await create({ firstName: 'Gone' });
    await rest('DELETE', `${base}/api/contacts/${deleted}`);
    const { survivor: other, a: merged } = await threeContacts('refused');
    expect((await merge(other, { mergeIds: [merged] })).status).toBe(200);
    const live = await create({ firstName: 'Live' });
    const was = await contact(survivor);
    const cases = [
      [survivor],
      ['00000000-0000-4000-8000-000000000000'],
      [deleted],
      [merged],
      [],
      Array.from({ length: 50 }, () => crypto.randomUUID()),
      [live, survivor],
    ];
    for (const mergeIds of cases) {
      const res = await merge(survivor, { mergeIds });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'mergeIds' })]);
    }
    const gql = await graphql<any>(
      platform.urls.gateway,
      'mutation ($input: MergeContactsInput!) { mergeContacts(input: $input) { contact { id } } }',
      { input: { survivorId: survivor, mergeIds: [survivor] } },
    );
    expect(gql.body.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(await contact(survivor)).toEqual(was);
    expect(await contact(live)).toMatchObject({ deleted: false });
    const unknownSurvivor = await merge('00000000-0000-4000-8000-000000000000', { mergeIds: [live] });
    expect(unknownSurvivor.status).toBe(404);
  });

  it('undoes a merge: contacts back with what moved from them, merged-in values back unless edited since; twice is a 409', async () => {
    const { survivor, a, b } = await threeContacts('undo');
    const merged = await merge(survivor, { mergeIds: [a, b] });
    expect(merged.status).toBe(200);
    // Edited since the merge: the company stays as edited; a note written on the survivor since stays there.
    expect((await rest('PUT', `${base}/api/contacts/${survivor}`, { company: 'Edited Ltd' })).status).toBe(200);
    await note(survivor, 'written after the merge');

    const res = await rest('POST', `${base}/api/contacts/merges/${merged.body.merge.id}/undo`);
    expect(res.status).toBe(200);
    expect(res.body.merge).toMatchObject({ id: merged.body.merge.id, undoneAt: expect.any(String) });
    expect(res.body.restored.map((c: { id: string }) => c.id).sort()).toEqual([a, b].sort());
    expect(res.body.survivor).toMatchObject({
      firstName: 'Ada',
      lastName: null,
      email: null,
      phone: null,
      company: 'Edited Ltd',
      tags: ['vip'],
    });
    expect(await contact(a)).toMatchObject({ deleted: false, mergedInto: null, email: 'ada.undo@example.com' });
    expect(await contact(b)).toMatchObject({ deleted: false, mergedInto: null, company: 'Analytical' });
    expect(await totals(a)).toEqual({ notes: 2, attachments: 1, history: 2 });
    expect(await totals(b)).toEqual({ notes: 1, attachments: 0, history: 0 });
    expect(await totals(survivor)).toEqual({ notes: 1, attachments: 0, history: 0 });
    const ids = await graphql<any>(platform.urls.gateway, 'query ($id: ID!) { contact(id: $id) { mergedIds } }', {
      id: survivor,
    });
    expect(ids.body.data.contact.mergedIds).toEqual([]);

    const again = await rest('POST', `${base}/api/contacts/merges/${merged.body.merge.id}/undo`);
    expect(again.status).toBe(409);
    const gql = await graphql<any>(
      platform.urls.gateway,
      'mutation ($id: ID!) { undoContactMerge(id: $id) { merge { id } } }',
      {
        id: merged.body.merge.id,
      },
    );
    expect(gql.body.errors?.[0].extensions).toMatchObject({ code: 'CONFLICT' });
  });
});
