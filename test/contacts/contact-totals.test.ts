import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ContactService,
  createSearchEstimates,
  EXACT_COUNT_LIMIT,
} from '#subgraphs/contacts/contact/contact.service.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

/**
 * Totals that stay cheap at any size: a search counts its matches exactly up to EXACT_COUNT_LIMIT
 * and estimates past it (flagged), the plain list reads the live count the triggers keep.
 */
describe('contact list totals', () => {
  let platform: TestPlatform;
  let base: string;
  const sql = (text: string) => platform.subgraphs.contacts.orm.em.fork().execute(text);
  const liveCount = async () =>
    Number((await sql('select count(*) as n from contacts.contact where not deleted'))[0].n);

  beforeAll(async () => {
    platform = await startTestPlatform();
    base = platform.urls.contactsRest;
    // More matches of one word than the exact count goes to, and a few of another.
    await sql(`insert into contacts.contact (id, first_name, last_name, created_at, updated_at)
      select gen_random_uuid(), 'Numerous', 'Person ' || g, now() - g * interval '1 second', now() from generate_series(1, ${EXACT_COUNT_LIMIT + 50}) g`);
    await sql(`insert into contacts.contact (id, first_name, last_name, created_at, updated_at)
      select gen_random_uuid(), 'Scarce', 'Person ' || g, now(), now() from generate_series(1, 7) g`);
    await sql('analyze contacts.contact');
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('counts a search exactly up to the limit, and says so by leaving the body as it was', async () => {
    const res = await rest('GET', `${base}/api/contacts?search=scarce`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: expect.any(Array), page: 1, limit: 20, total: 7 });
  });

  it('estimates a search past the limit and flags it in the REST body and in GraphQL', async () => {
    const res = await rest('GET', `${base}/api/contacts?search=numerous&limit=5&page=3`);
    expect(res.status).toBe(200);
    const body = res.body as { data: unknown[]; total: number; totalExact?: boolean };
    expect(body.data).toHaveLength(5);
    expect(body.totalExact).toBe(false);
    expect(body.total).toBeGreaterThan(EXACT_COUNT_LIMIT);

    const page = await graphql<any>(
      platform.urls.gateway,
      '{ contactPage(search: "numerous") { total totalExact } contacts(search: "numerous", first: 1) { totalCount totalExact } }',
    );
    expect(page.body.data.contactPage).toEqual({ total: expect.any(Number), totalExact: false });
    expect(page.body.data.contacts.totalExact).toBe(false);
    const exact = await graphql<any>(
      platform.urls.gateway,
      '{ contacts(search: "scarce", first: 1) { totalCount totalExact } }',
    );
    expect(exact.body.data.contacts).toEqual({ totalCount: 7, totalExact: true });
  });

  it('plans a search once, and a remembered estimate only chooses between counting and estimating', async () => {
    const estimates = createSearchEstimates();
    const search = (words: string) =>
      new ContactService(platform.subgraphs.contacts.orm.em.fork(), estimates).list({ offset: 0, limit: 5 }, words);
    const first = await search('numerous');
    expect(first.totalExact).toBe(false);
    expect(first.total).toBeGreaterThan(EXACT_COUNT_LIMIT);
    expect(estimates.get('numerous')).toEqual(expect.any(Number));
    // Remembered far too low: the search is counted, and a count past the limit is flagged, never a wrong exact total.
    estimates.set('numerous', 3);
    const counted = await search('numerous');
    expect(counted.totalExact).toBe(false);
    expect(counted.total).toBeGreaterThan(EXACT_COUNT_LIMIT);
    // Remembered far too high: the remembered estimate is the answer, flagged, and nothing is planned or counted.
    estimates.set('scarce', 50_000);
    expect(await search('scarce')).toMatchObject({ total: 50_000, totalExact: false });
    estimates.delete('scarce');
    expect(await search('scarce')).toMatchObject({ total: 7, totalExact: true });
  });

  it('keeps the plain list total exact through creates, soft deletes and bulk writes', async () => {
    const total = async () =>
      (await rest('GET', `${base}/api/contacts?limit=1`)).body as { total: number; totalExact?: boolean };
    expect(await total()).toMatchObject({ total: await liveCount() });
    expect((await total()).totalExact).toBeUndefined();

    const created = await rest('POST', `${base}/api/contacts`, { firstName: 'Counted' });
    const id = (created.body as { id: string }).id;
    expect((await total()).total).toBe(await liveCount());
    await rest('DELETE', `${base}/api/contacts/${id}`);
    expect((await total()).total).toBe(await liveCount());
    await sql(`update contacts.contact set deleted = true, deleted_at = now() where first_name = 'Scarce'`);
    await sql(`delete from contacts.contact where first_name = 'Counted'`);
    expect((await total()).total).toBe(await liveCount());
    expect((await rest('GET', `${base}/api/contacts?search=scarce`)).body).toMatchObject({ total: 0 });
  });
});
