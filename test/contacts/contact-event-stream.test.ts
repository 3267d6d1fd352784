import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Readable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import type { FormattedExecutionResult } from 'graphql';
import { createStorage } from '#lib/storage/create-storage.js';
import { sweepContactEvents } from '#subgraphs/contacts/contact/contact-event.service.js';
import { startContactsSubgraph } from '#subgraphs/contacts/index.js';
import type { ContactsRuntime } from '#subgraphs/contacts/contacts.runtime.js';
import { reader, startTestSubgraph, type TestSubgraph } from '#test/support/subgraph.js';

const FOLLOW = `subscription ($after: String) {
  contactEvents(after: $after) { id cursor type contactId fromStageId toStageId occurredAt contact { id firstName } }
}`;

const HISTORY = `query ($first: Int, $after: String, $last: Int, $before: String) {
  contactEvents(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { id cursor type contactId contact { id firstName } } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

const kinds = process.env.TEST_DATABASE_URL ? (['postgresql', 'pglite'] as const) : (['pglite'] as const);

describe.each(kinds)('contacts streams on %s', (kind) => {
  let contacts: TestSubgraph<ContactsRuntime>;
  let reader1: Record<string, string>;
  const statements: string[] = [];

  const history = async (variables: Record<string, unknown>, headers = reader1) =>
    (await contacts.run(HISTORY, variables, headers)).contactEvents;
  /**
   * The newest `count` events once the last is `contactId`'s: an event committed behind a transaction
   * still running (another suite's, on a shared server) is read once that one ends, as the stream reads it.
   */
  const newest = async (count: number, contactId: string) => {
    for (let tries = 0; ; tries++) {
      const page = await history({ last: count });
      if (page.edges.at(-1)?.node.contactId === contactId || tries === 40) return page;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const createContact = async (firstName: string): Promise<string> =>
    (
      await contacts.run(
        'mutation ($firstName: String!) { createContact(input: { firstName: $firstName }) { id } }',
        { firstName },
        reader1,
      )
    ).createContact.id;

  const follow = (variables: Record<string, unknown>, headers = reader1) =>
    contacts.subgraph.local.subscribe({ query: FOLLOW, variables }, { headers });
  const eventOf = (result: FormattedExecutionResult | 'ended') => {
    if (result === 'ended' || result.errors) throw new Error(JSON.stringify(result));
    return (result.data as any).contactEvents;
  };

  beforeAll(async () => {
    contacts = await startTestSubgraph(startContactsSubgraph, {
      embedded: kind === 'pglite',
      env: { CONTACTS_AUTH: 'required' },
      onQuery: (sql) => statements.push(stripVTControlCharacters(sql)),
    });
    reader1 = await contacts.bearer('sales-1');
  }, 60_000);
  afterAll(() => contacts?.stop());

  it('announces a create, an update, a stage move and a delete, each in its order with its fields', async () => {
    const stream = follow({});
    const events = reader(stream);
    await events.quietFor(200);
    const id = (await contacts.run('mutation { createContact(input: { firstName: "Ada" }) { id } }', {}, reader1))
      .createContact.id;
    // Read before the next change: the contact an event names is read as it is at delivery.
    const created = eventOf(await events.next());
    expect(created).toMatchObject({ type: 'CREATED', contactId: id, contact: { firstName: 'Ada' } });
    await contacts.run(
      'mutation ($id: ID!) { updateContact(id: $id, input: { firstName: "Ada L." }) { id } }',
      { id },
      reader1,
    );
    const pipeline = (
      await contacts.run(
        'mutation { createPipeline(input: { name: "Live board", stages: ["Lead", "Won"] }) { id stages { id } } }',
        {},
        reader1,
      )
    ).createPipeline;
    const won = pipeline.stages[1].id as string;
    await contacts.run(
      'mutation ($id: ID!, $input: MoveInput!) { moveContact(contactId: $id, input: $input) { stageId } }',
      { id, input: { stageId: won, pipelineId: pipeline.id } },
      reader1,
    );
    await contacts.run('mutation ($id: ID!) { deleteContact(id: $id) { deletedId } }', { id }, reader1);

    expect(eventOf(await events.next())).toMatchObject({ type: 'UPDATED', contactId: id });
    expect(eventOf(await events.next())).toMatchObject({ type: 'MOVED', contactId: id, toStageId: won });
    expect(eventOf(await events.next())).toMatchObject({ type: 'DELETED', contactId: id, contact: null });
    await stream.return?.();

    const resumed = follow({ after: created.cursor });
    const again = reader(resumed);
    expect(eventOf(await again.next()).type).toBe('UPDATED');
    await resumed.return?.();
  });

  it('announces a merge once, as MERGED of the survivor, with the survivor as it now is', async () => {
    const [survivor, other] = [await createContact('Dana'), await createContact('Dana S.')];
    const stream = follow({});
    const events = reader(stream);
    await events.quietFor(200);
    await contacts.run(
      'mutation ($input: MergeContactsInput!) { mergeContacts(input: $input) { contact { id } } }',
      { input: { survivorId: survivor, mergeIds: [other] } },
      reader1,
    );
    expect(eventOf(await events.next())).toMatchObject({
      type: 'MERGED',
      contactId: survivor,
      contact: { id: survivor, firstName: 'Dana' },
    });
    // One event for the whole merge: the merged contact is not announced deleted besides.
    expect(await events.quietFor(300)).toBe(true);
    await stream.return?.();
  });

  it('refuses a caller without contacts.read at subscribe, and an after that is no cursor', async () => {
    const noScope = await contacts.bearer('sales-2', ['contacts.write']);
    const refused = await reader(follow({}, noScope)).next();
    expect((refused as FormattedExecutionResult).errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
    const bad = await reader(follow({ after: 'x' })).next();
    expect((bad as FormattedExecutionResult).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('reads the history with the contactEvents query, oldest first, then follows from its last cursor: none missed, none twice', async () => {
    const [ada, bea, cy] = [await createContact('Ada'), await createContact('Bea'), await createContact('Cy')];
    const page = await newest(3, cy);
    expect(page.edges.map((edge: any) => [edge.node.type, edge.node.contactId, edge.node.contact.firstName])).toEqual([
      ['CREATED', ada, 'Ada'],
      ['CREATED', bea, 'Bea'],
      ['CREATED', cy, 'Cy'],
    ]);
    // An edge's cursor is its event's, the one the subscription carries.
    for (const edge of page.edges) expect(edge.cursor).toBe(edge.node.cursor);
    expect(page.pageInfo).toMatchObject({ hasNextPage: false, endCursor: page.edges[2].cursor });
    const [first, second, last] = page.edges.map((edge: any) => edge.cursor as string);

    // Forward after a cursor, and back before one.
    const forward = await history({ first: 1, after: first });
    expect(forward.edges.map((edge: any) => edge.node.contactId)).toEqual([bea]);
    expect(forward.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const back = await history({ last: 1, before: last });
    expect(back.edges.map((edge: any) => edge.cursor)).toEqual([second]);
    expect(back.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });

    // The subscription resumed from the query's cursors: the same events, with the same cursors.
    const replay = follow({ after: first });
    const replayed = reader(replay);
    expect(eventOf(await replayed.next())).toMatchObject({ contactId: bea, cursor: second });
    expect(eventOf(await replayed.next())).toMatchObject({ contactId: cy, cursor: last });
    await replay.return?.();

    // Followed after the last edge read: only what came later.
    const stream = follow({ after: last });
    const events = reader(stream);
    expect(await events.quietFor(300)).toBe(true);
    const dan = await createContact('Dan');
    expect(eventOf(await events.next())).toMatchObject({ type: 'CREATED', contactId: dan });
    expect(await events.quietFor(300)).toBe(true);
    await stream.return?.();
    expect((await history({ after: last })).edges.map((edge: any) => edge.node.contactId)).toEqual([dan]);
  });

  it('reads a page of contactEvents and its contacts in a fixed number of statements, however many events', async () => {
    for (const name of ['N1', 'N2', 'N3', 'N4', 'N5']) await createContact(name);
    const { endCursor } = (await history({ first: 1 })).pageInfo;
    statements.length = 0;
    const page = await history({ first: 5 });
    expect(page.edges).toHaveLength(5);
    // The page (under the feed's horizon), then every contact it names at once.
    expect(statements).toEqual([
      expect.stringMatching(
        /^\[query\] select e\.\*, .* from "contacts"\."contact_event" as e\s+where e\.xact < pg_snapshot_xmin/,
      ),
      expect.stringMatching(/from "contacts"\."contact"/),
    ]);
    statements.length = 0;
    await history({ first: 5, after: endCursor });
    // `after` is checked to name an event still kept, as the subscription checks it.
    expect(statements).toHaveLength(3);
    expect(statements[0]).toMatch(/^\[query\] select 1 from "contacts"\."contact_event" where xact = /);
    statements.length = 0;
    const counted = await contacts.run('{ contactEvents(first: 1) { totalCount nodes { id } } }', {}, reader1);
    // The total is counted only when asked for.
    expect(counted.contactEvents.totalCount).toBeGreaterThanOrEqual(5);
    expect(statements).toHaveLength(2);
  });

  it('refuses the contactEvents query without contacts.read, and an after or before that is no cursor, naming it', async () => {
    const noScope = await contacts.bearer('sales-2', ['contacts.write']);
    const answer = (variables: Record<string, unknown>, headers = reader1) =>
      contacts.subgraph.local.execute({ query: HISTORY, variables }, { headers });
    const forbidden = await answer({}, noScope);
    expect(forbidden.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
    for (const [argument, value] of [
      ['after', 'x'],
      ['before', 'x'],
      ['after', Buffer.from('ev1:99999999999999999999:1').toString('base64url')],
    ]) {
      const refused = await answer({ [argument]: value });
      expect(refused.errors?.[0]).toMatchObject({
        extensions: { code: 'BAD_USER_INPUT' },
        message: expect.stringContaining(argument),
      });
    }
    expect((await answer({ first: 1, last: 1 })).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('follows an import with contactImport until it SUCCEEDED, without announcing its rows', async () => {
    const events = follow({});
    const quietEvents = reader(events);
    await quietEvents.quietFor(100);
    const slot = (await contacts.run('mutation { reserveContactImport { uploadId storageKey } }', {}, reader1))
      .reserveContactImport;
    const csv = `firstName,email\n${Array.from({ length: 50 }, (_, i) => `P${i},p${i}@example.com`).join('\n')}\n`;
    await createStorage(contacts.config).put(slot.storageKey, Readable.from([csv]), {
      contentType: 'text/csv',
      maxBytes: 100_000,
    });
    const job = (
      await contacts.run(
        'mutation ($id: ID!) { startContactImport(uploadId: $id) { id } }',
        { id: slot.uploadId },
        reader1,
      )
    ).startContactImport;
    const stream = contacts.subgraph.local.subscribe(
      {
        query: 'subscription ($id: ID!) { contactImport(id: $id) { id status processed created } }',
        variables: { id: job.id },
      },
      { headers: reader1 },
    );
    const seen: any[] = [];
    const progress = reader(stream, 30_000);
    for (;;) {
      const next = await progress.next();
      if (next === 'ended') break;
      if (next.errors) throw new Error(JSON.stringify(next.errors));
      seen.push((next.data as any).contactImport);
    }
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen.at(-1)).toMatchObject({ id: job.id, status: 'SUCCEEDED', created: 50 });
    expect(seen.filter((answer) => answer.status === 'SUCCEEDED')).toHaveLength(1);
    // The 50 rows were not announced as 50 contact events.
    expect(await quietEvents.quietFor(500)).toBe(true);
    await events.return?.();
  });

  it('answers NOT_FOUND for an unknown import and ends', async () => {
    const stream = contacts.subgraph.local.subscribe(
      {
        query: 'subscription ($id: ID!) { contactImport(id: $id) { id } }',
        variables: { id: '00000000-0000-4000-8000-000000000000' },
      },
      { headers: reader1 },
    );
    const answers = reader(stream);
    const refused = await answers.next();
    expect((refused as FormattedExecutionResult).errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect(await answers.next()).toBe('ended');
  });

  it('keeps events 7 days: an after older than what is kept is BAD_USER_INPUT naming after', async () => {
    const stream = follow({});
    const events = reader(stream);
    await events.quietFor(100);
    await contacts.run('mutation { createContact(input: { firstName: "Old" }) { id } }', {}, reader1);
    const old = eventOf(await events.next());
    await stream.return?.();
    const inSixDays = new Date(Date.now() + 6 * 24 * 3600 * 1000);
    expect(await sweepContactEvents(contacts.subgraph.orm.em.fork(), inSixDays)).toBe(0);
    const inEightDays = new Date(Date.now() + 8 * 24 * 3600 * 1000);
    expect(await sweepContactEvents(contacts.subgraph.orm.em.fork(), inEightDays)).toBeGreaterThan(0);
    const refused = await reader(follow({ after: old.cursor })).next();
    expect((refused as FormattedExecutionResult).errors?.[0]).toMatchObject({
      extensions: { code: 'BAD_USER_INPUT' },
      message: expect.stringContaining('after'),
    });
    // The query of the same name refuses it as the stream does.
    const listed = await contacts.subgraph.local.execute(
      { query: HISTORY, variables: { after: old.cursor } },
      { headers: reader1 },
    );
    expect(listed.errors?.[0]).toMatchObject({
      extensions: { code: 'BAD_USER_INPUT' },
      message: expect.stringContaining('after'),
    });
  });
});
