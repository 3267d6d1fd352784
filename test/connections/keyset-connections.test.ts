import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { freePort } from '#test/support/ports.js';

interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}
interface Page {
  ids: string[];
  pageInfo: PageInfo;
}
interface PagingArgs {
  first?: number;
  after?: string | null;
  last?: number;
  before?: string | null;
}

/**
 * Every connection of the graph, walked by cursor while its list changes: page 1, then an item
 * created and one already seen deleted, then the rest from page 1's end cursor must hold every
 * other item of the list as it was, once; and paging back with last/before reaches the start.
 */
describe('keyset cursors on every connection', () => {
  let platform: TestPlatform;
  let user: Record<string, string>;
  const gateway = () => platform.urls.gateway;

  beforeAll(async () => {
    // A fixed social REST port: the media upload URLs it signs name it.
    platform = await startTestPlatform({ SOCIAL_REST_PORT: String(await freePort()) });
    user = { authorization: `Bearer ${await platform.token('keyset-walker')}` };
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
  });

  async function call<T = any>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const answer = await graphql<T>(gateway(), query, variables, user);
    expect(answer.body.errors).toBeUndefined();
    return answer.body.data!;
  }

  /** A reader of one connection: `selection` wraps `CONNECTION` (replaced by the paged field) to reach it in the answer. */
  function reader(field: string, fixedArgs: string, pick: (data: any) => any, wrap = (inner: string) => inner) {
    const args = [fixedArgs, 'first: $first, after: $after, last: $last, before: $before'].filter(Boolean).join(', ');
    const query = `query ($first: Int, $after: String, $last: Int, $before: String) { ${wrap(
      `${field}(${args}) { nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }`,
    )} }`;
    return async (paging: PagingArgs): Promise<Page> => {
      const connection = pick(await call(query, paging as Record<string, unknown>));
      return { ids: connection.nodes.map((node: { id: string }) => node.id), pageInfo: connection.pageInfo };
    };
  }

  async function walk(
    read: (paging: PagingArgs) => Promise<Page>,
    create: () => Promise<unknown>,
    remove: ((id: string) => Promise<unknown>) | null,
  ): Promise<void> {
    const before = (await read({ first: 100 })).ids;
    expect(before.length).toBeGreaterThanOrEqual(5);
    const first = await read({ first: 2 });
    expect(first.ids).toEqual(before.slice(0, 2));
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    await create();
    if (remove) await remove(first.ids[0]);
    const rest = await read({ first: 100, after: first.pageInfo.endCursor });
    // No repeat of page 1, and every item that was there, in its place: no skip.
    expect(rest.ids.filter((id) => first.ids.includes(id))).toEqual([]);
    expect([...first.ids, ...rest.ids.filter((id) => before.includes(id))]).toEqual(before);
    expect(rest.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    // Back from page 2: the item before it is page 1's last, which is still there.
    const back = await read({ last: 1, before: rest.pageInfo.startCursor });
    expect(back.ids).toEqual([first.ids[1]]);
    expect(back.pageInfo.hasNextPage).toBe(true);
    // From the end back to the start, two at a time: the whole list as it is now, once.
    const now = (await read({ first: 100 })).ids;
    const collected: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 60; pages++) {
      const page = await read({ last: 2, before: cursor });
      collected.unshift(...page.ids);
      if (!page.pageInfo.hasPreviousPage) break;
      cursor = page.pageInfo.startCursor;
    }
    expect(collected).toEqual(now);
  }

  const times = (count: number) => Array.from({ length: count }, (_, index) => index);

  describe('social', () => {
    let brandId: string;
    const post = async (body: Record<string, unknown>) => {
      const answer = await rest('POST', `${platform.urls.socialRest}/api/posts`, { platforms: ['x'], ...body }, user);
      expect(answer.body).toMatchObject({ id: expect.any(String) });
      return answer.body.id as string;
    };
    const deletePost = (id: string) => call('mutation ($id: ID!) { deletePost(id: $id) { deletedId } }', { id });

    beforeAll(async () => {
      brandId = (await call('mutation { createBrand(input: { name: "Keyset" }) { id } }')).createBrand.id;
    });

    it('posts', async () => {
      for (const index of times(5)) await post({ content: `post ${index}`, brandId });
      await walk(
        reader('posts', '', (data) => data.posts),
        () => post({ content: 'newest', brandId }),
        deletePost,
      );
    });

    it('suggestions', async () => {
      for (const index of times(5)) await post({ content: `idea ${index}`, status: 'suggested', brandId });
      await walk(
        reader('suggestions', '', (data) => data.suggestions),
        () => post({ content: 'new idea', status: 'suggested', brandId }),
        deletePost,
      );
    });

    it('contentQueue (due order)', async () => {
      for (const day of [3, 5, 7, 9, 11])
        await post({ content: `due ${day}`, scheduledAt: `2037-01-${String(day).padStart(2, '0')}T00:00:00Z` });
      // Sorts among the items not read yet.
      await walk(
        reader('contentQueue', '', (data) => data.contentQueue),
        () => post({ content: 'due 8', scheduledAt: '2037-01-08T00:00:00Z' }),
        deletePost,
      );
    });

    it('contentEvents', async () => {
      await walk(
        reader('contentEvents', '', (data) => data.contentEvents),
        () => post({ content: 'one more event' }),
        null,
      );
    });

    it('campaigns', async () => {
      const create = async () =>
        (
          await call('mutation ($brandId: ID) { createCampaign(input: { brandId: $brandId, name: "C" }) { id } }', {
            brandId,
          })
        ).createCampaign.id;
      for (const _ of times(5)) await create();
      await walk(
        reader('campaigns', '', (data) => data.campaigns),
        create,
        (id) => call('mutation ($id: ID!) { deleteCampaign(id: $id) { deletedId } }', { id }),
      );
    });

    it('webhookDeliveries, attempts sharing one instant to the microsecond told apart by id', async () => {
      const sql = (text: string, params: unknown[] = []) =>
        platform.subgraphs.social.orm.em.fork().getConnection().execute(text, params);
      const webhookId = (
        await call(
          'mutation { createWebhook(input: { url: "http://127.0.0.1:9/hook", events: ["post.approved"] }) { webhook { id } } }',
        )
      ).createWebhook.webhook.id as string;
      const [message] = await sql(
        `insert into social.webhook_message (id, webhook_id, owner_id, event_id, type, body, status)
         values (gen_random_uuid(), ?, 'keyset-walker', gen_random_uuid(), 'post.approved', '{}', 'failed') returning id`,
        [webhookId],
      );
      // Written by SQL at a finer time than a JavaScript date holds: the cursor must still name the row exactly.
      const attempt = (at: string) =>
        sql(
          `insert into social.webhook_delivery (id, message_id, webhook_id, event_id, type, attempt, succeeded, duration_ms, attempted_at)
           values (gen_random_uuid(), ?, ?, gen_random_uuid(), 'post.approved', 1, false, 1, ?::timestamptz)`,
          [message.id, webhookId, at],
        );
      for (const micro of ['123401', '123402', '123403', '123404', '123405'])
        await attempt(`2030-01-01T00:00:00.${micro}Z`);
      await walk(
        reader('webhookDeliveries', `webhookId: "${webhookId}"`, (data) => data.webhookDeliveries),
        () => attempt('2030-01-01T00:00:00.123406Z'),
        (id) => sql('delete from social.webhook_delivery where id = ?', [id]),
      );
    });

    it('media', async () => {
      const png = Buffer.from(
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
        'base64',
      );
      const upload = async () => {
        const grant = await rest(
          'POST',
          `${platform.urls.socialRest}/api/media/upload`,
          { filename: 'walk.png', contentType: 'image/png', size: png.length },
          user,
        );
        expect(grant.status).toBe(200);
        const put = await fetch(grant.body.uploadUrl, {
          method: 'PUT',
          headers: { 'content-type': 'image/png' },
          body: new Uint8Array(png),
        });
        expect(put.ok).toBe(true);
        return grant.body.id as string;
      };
      for (const _ of times(5)) await upload();
      const sql = (text: string, params: unknown[] = []) =>
        platform.subgraphs.social.orm.em.fork().getConnection().execute(text, params);
      await walk(
        reader('media', '', (data) => data.media),
        upload,
        (id) => sql('delete from social.media_file where id = ?', [id]),
      );
    });

    it('brands (oldest first: a new one sorts last)', async () => {
      const create = () => call('mutation { createBrand(input: { name: "More" }) { id } }');
      for (const _ of times(4)) await create();
      await walk(
        reader('brands', '', (data) => data.brands),
        create,
        null,
      );
    });

    it('refuses first and last together, and a bad before cursor, naming the argument', async () => {
      const both = await graphql(gateway(), '{ posts(first: 1, last: 1) { nodes { id } } }', {}, user);
      expect(both.body.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        errors: [{ field: 'last', message: expect.stringContaining('first') }],
      });
      const bad = await graphql(gateway(), '{ brands(last: 1, before: "bm90") { nodes { id } } }', {}, user);
      expect(bad.body.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        errors: [{ field: 'before', message: 'is not a cursor of this list' }],
      });
    });
  });

  describe('contacts', () => {
    const createContact = async (name: string) =>
      (await call('mutation ($name: String) { createContact(input: { firstName: $name }) { id } }', { name }))
        .createContact.id as string;
    const deleteContact = (id: string) => call('mutation ($id: ID!) { deleteContact(id: $id) { deletedId } }', { id });

    it('contacts, and contactScroll on the same cursors', async () => {
      for (const index of times(5)) await createContact(`Walker ${index}`);
      await walk(
        reader('contacts', '', (data) => data.contacts),
        () => createContact('Newest'),
        deleteContact,
      );
      const list = await reader('contacts', '', (data) => data.contacts)({ first: 2 });
      const scroll = await call(
        'query ($after: String) { contactScroll(first: 100, after: $after) { nodes { id } } }',
        { after: list.pageInfo.endCursor },
      );
      const rest = await reader(
        'contacts',
        '',
        (data) => data.contacts,
      )({ first: 100, after: list.pageInfo.endCursor });
      expect(scroll.contactScroll.nodes.map((node: { id: string }) => node.id)).toEqual(rest.ids);
      await walk(
        reader('contactScroll', '', (data) => data.contactScroll),
        () => createContact('Scrolled'),
        deleteContact,
      );
    });

    it('contacts matching a search', async () => {
      for (const index of times(5)) await createContact(`Zebulon ${index}`);
      await walk(
        reader('contacts', 'search: "zebulon"', (data) => data.contacts),
        () => createContact('Zebulon new'),
        deleteContact,
      );
    });

    it('notes', async () => {
      const contactId = await createContact('Noted');
      const create = () =>
        call('mutation ($contactId: ID!) { createNote(contactId: $contactId, input: { body: "n" }) { id } }', {
          contactId,
        });
      for (const _ of times(5)) await create();
      await walk(
        reader('notes', `contactId: "${contactId}"`, (data) => data.notes),
        create,
        (id) =>
          call('mutation ($id: ID!, $c: ID!) { deleteNote(id: $id, contactId: $c) { deletedId } }', {
            id,
            c: contactId,
          }),
      );
    });

    it('attachments', async () => {
      const contactId = await createContact('Attached');
      const upload = async () => {
        const form = new FormData();
        form.append('file', new Blob(['walk'], { type: 'text/plain' }), 'walk.txt');
        const response = await fetch(`${platform.urls.contactsRest}/api/contacts/${contactId}/attachments`, {
          method: 'POST',
          headers: user,
          body: form,
        });
        expect(response.status).toBe(201);
      };
      for (const _ of times(5)) await upload();
      await walk(
        reader('attachments', `contactId: "${contactId}"`, (data) => data.attachments),
        upload,
        (id) => rest('DELETE', `${platform.urls.contactsRest}/api/attachments/${id}`, undefined, user),
      );
    });

    it('pipelines, stageMoves and the contacts of a stage', async () => {
      let pipelines = 0;
      const createPipeline = async () =>
        (
          await call(
            'mutation ($name: String!) { createPipeline(input: { name: $name, stages: ["A", "B"] }) { id stages { id } } }',
            {
              name: `Pipeline ${++pipelines}`,
            },
          )
        ).createPipeline as { id: string; stages: { id: string }[] };
      const pipeline = await createPipeline();
      for (const _ of times(4)) await createPipeline();
      await walk(
        reader('pipelines', '', (data) => data.pipelines),
        createPipeline,
        null,
      );

      const contactId = await createContact('Mover');
      const move = (stage: number) =>
        call(
          'mutation ($c: ID!, $s: ID!, $p: ID) { moveContact(contactId: $c, input: { stageId: $s, pipelineId: $p }) { stageId } }',
          {
            c: contactId,
            s: pipeline.stages[stage].id,
            p: pipeline.id,
          },
        );
      for (const index of times(5)) await move(index % 2);
      await walk(
        reader('stageMoves', `contactId: "${contactId}"`, (data) => data.stageMoves),
        () => move(1),
        null,
      );

      const board = pipeline.stages[0].id;
      const onBoard: string[] = [];
      for (const index of times(5)) {
        const id = await createContact(`Board ${index}`);
        await call(
          'mutation ($c: ID!, $s: ID!, $p: ID) { moveContact(contactId: $c, input: { stageId: $s, pipelineId: $p }) { stageId } }',
          {
            c: id,
            s: board,
            p: pipeline.id,
          },
        );
        onBoard.push(id);
      }
      await walk(
        reader(
          'contacts',
          '',
          (data) => data.pipeline.stages[0].contacts,
          (inner) => `pipeline(id: "${pipeline.id}") { stages { ${inner} } }`,
        ),
        async () => {
          const id = await createContact('Board new');
          await call(
            'mutation ($c: ID!, $s: ID!, $p: ID) { moveContact(contactId: $c, input: { stageId: $s, pipelineId: $p }) { stageId } }',
            {
              c: id,
              s: board,
              p: pipeline.id,
            },
          );
        },
        deleteContact,
      );
    });
  });
});
