import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

/**
 * A merge reaches across services the federated way: the survivor's `surveys` (surveys subgraph,
 * `@requires(fields: "mergedIds")`) include the merged contacts' surveys, and `Survey.contact`
 * (contacts subgraph, `@requires(fields: "contactId")`) answers the survivor; an undo, written in
 * the contacts service only, takes both back.
 */
describe.each([
  { label: 'PostgreSQL (or PGlite when TEST_DATABASE_URL is unset)', embedded: false },
  { label: 'embedded PGlite', embedded: true },
])('surveys of merged contacts through the gateway on $label', ({ embedded }) => {
  let platform: TestPlatform;
  let headers: Record<string, string>;
  const ask = async (query: string, variables: Record<string, unknown> = {}) => {
    const res = await graphql<any>(platform.urls.gateway, query, variables, headers);
    expect(res.body.errors).toBeUndefined();
    return res.body.data;
  };
  const createContact = async (firstName: string) =>
    (await rest('POST', `${platform.urls.contactsRest}/api/contacts`, { firstName })).body.id as string;
  const createSurvey = async (venueName: string, contactId: string) =>
    (
      await ask('mutation ($input: CreateSurveyInput!) { createSurvey(input: $input) { id } }', {
        input: { venueName, contactId },
      })
    ).createSurvey.id as string;
  const surveysOf = async (id: string) =>
    (
      (await ask('query ($id: ID!) { contact(id: $id) { surveys { id } } }', { id })).contact.surveys as {
        id: string;
      }[]
    )
      .map((survey) => survey.id)
      .sort();
  const contactOf = async (id: string) =>
    (await ask('query ($id: ID!) { survey(id: $id) { contact { id firstName } } }', { id })).survey.contact;

  beforeAll(async () => {
    platform = await startTestPlatform({}, { embedded });
    headers = { authorization: `Bearer ${await platform.token('surveyor', undefined, 'surveyor@example.com')}` };
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('lists the merged contacts surveys on the survivor, answers the survivor as their contact, and undoes both', async () => {
    const survivor = await createContact('Survivor');
    const merged = await createContact('Merged');
    const own = await createSurvey('Own hall', survivor);
    const moved = await createSurvey('Merged hall', merged);
    expect(await surveysOf(survivor)).toEqual([own]);

    const merge = await ask(
      'mutation ($input: MergeContactsInput!) { mergeContacts(input: $input) { merge { id } contact { mergedIds } } }',
      { input: { survivorId: survivor, mergeIds: [merged] } },
    );
    expect(merge.mergeContacts.contact.mergedIds).toEqual([merged]);
    expect(await surveysOf(survivor)).toEqual([own, moved].sort());
    expect(await contactOf(moved)).toEqual({ id: survivor, firstName: 'Survivor' });
    // The merged contact stays readable by id, and says where it went.
    expect((await ask('query ($id: ID!) { contact(id: $id) { mergedInto } }', { id: merged })).contact).toEqual({
      mergedInto: survivor,
    });

    await ask('mutation ($id: ID!) { undoContactMerge(id: $id) { merge { undoneAt } } }', {
      id: merge.mergeContacts.merge.id,
    });
    expect(await surveysOf(survivor)).toEqual([own]);
    expect(await surveysOf(merged)).toEqual([moved]);
    expect(await contactOf(moved)).toEqual({ id: merged, firstName: 'Merged' });
  });
});
