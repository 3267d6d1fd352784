import 'reflect-metadata';
import { stripVTControlCharacters } from 'node:util';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Readable } from 'node:stream';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { createStorage } from '#lib/storage/create-storage.js';
import { sweepAttachmentUploads } from '#subgraphs/contacts/attachments/attachment.service.js';
import { sweepImportUploads } from '#subgraphs/contacts/import/contact-import.service.js';

const MAX_BYTES = 4096;

/** Every file under a folder (recursively), for "nothing was kept" checks. */
function filesUnder(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

async function upload(
  url: string,
  content: Blob | string,
  filename = 'notes.txt',
  type = 'text/plain',
  field = 'file',
) {
  const form = new FormData();
  form.append(field, typeof content === 'string' ? new Blob([content], { type }) : content, filename);
  const response = await fetch(url, { method: 'POST', body: form });
  const text = await response.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, headers: response.headers, body };
}

describe('contacts: notes, attachments, pipelines', () => {
  let platform: TestPlatform;
  let base: string;
  let statements: string[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform(
      { ATTACHMENT_MAX_BYTES: String(MAX_BYTES) },
      { onQuery: (service, sql) => service === 'contacts' && statements.push(stripVTControlCharacters(sql)) },
    );
    base = platform.urls.contactsRest;
  });
  afterAll(async () => {
    await platform?.stop();
  });

  const newContact = async (firstName: string, extra: Record<string, unknown> = {}) => {
    const res = await rest('POST', `${base}/api/contacts`, { firstName, ...extra });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  it('lists every endpoint of the description at /api', async () => {
    const res = await rest('GET', `${base}/api`);
    expect(res.status).toBe(200);
    const listed = res.body.endpoints.map((e: { method: string; path: string }) => `${e.method} ${e.path}`);
    expect(listed).toEqual(
      expect.arrayContaining([
        'GET /health',
        'GET /api',
        'GET /api/contacts',
        'POST /api/contacts',
        'GET /api/contacts/{id}',
        'PUT /api/contacts/{id}',
        'DELETE /api/contacts/{id}',
        'GET /api/contacts/{id}/notes',
        'POST /api/contacts/{id}/notes',
        'GET /api/contacts/{contactId}/notes/{noteId}',
        'PUT /api/contacts/{contactId}/notes/{noteId}',
        'DELETE /api/contacts/{contactId}/notes/{noteId}',
        'GET /api/contacts/{id}/attachments',
        'POST /api/contacts/{id}/attachments',
        'GET /api/attachments/{id}',
        'DELETE /api/attachments/{id}',
        'GET /api/pipeline',
        'GET /api/pipeline/{pipelineId}',
        'GET /api/pipeline/{pipelineId}/board',
        'PUT /api/pipeline/{contactId}/move',
        'GET /api/pipeline/{contactId}/history',
        'POST /api/contacts/import',
        'GET /api/contacts/export',
      ]),
    );
    // import and export are matched before /api/contacts/{id} would take them for ids
    expect(listed.indexOf('GET /api/contacts/export')).toBeLessThan(listed.indexOf('GET /api/contacts/{id}'));
  });

  describe('notes', () => {
    it('adds, lists newest first, reads, updates and deletes notes', async () => {
      const contactId = await newContact('Noah');
      const first = await rest('POST', `${base}/api/contacts/${contactId}/notes`, { body: 'Called, no answer' });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ contactId, body: 'Called, no answer' });
      const second = await rest('POST', `${base}/api/contacts/${contactId}/notes`, { body: 'Sent the proposal' });
      expect(second.status).toBe(201);

      const list = await rest('GET', `${base}/api/contacts/${contactId}/notes`);
      expect(list.status).toBe(200);
      expect(list.body).toMatchObject({ page: 1, limit: 20, total: 2 });
      expect(list.body.data.map((note: { body: string }) => note.body)).toEqual([
        'Sent the proposal',
        'Called, no answer',
      ]);
      const paged = await rest('GET', `${base}/api/contacts/${contactId}/notes?page=2&limit=1`);
      expect(paged.body.data.map((note: { body: string }) => note.body)).toEqual(['Called, no answer']);

      const noteUrl = `${base}/api/contacts/${contactId}/notes/${first.body.id}`;
      expect((await rest('GET', noteUrl)).body.body).toBe('Called, no answer');
      const updated = await rest('PUT', noteUrl, { body: 'Called back: interested' });
      expect(updated.status).toBe(200);
      expect(updated.body.body).toBe('Called back: interested');

      const deleted = await rest('DELETE', noteUrl);
      expect(deleted.status).toBe(200);
      expect((await rest('GET', noteUrl)).status).toBe(404);
      expect((await rest('DELETE', noteUrl)).status).toBe(404);
      const rows = await platform.subgraphs.contacts.orm.em
        .fork()
        .getConnection()
        .execute('select count(*)::int as n from contacts.note where id = ?', [first.body.id]);
      expect(rows[0].n).toBe(0);
    });

    it('answers 404 for a note under another contact, unknown ids and deleted contacts; 400 for bad bodies', async () => {
      const owner = await newContact('Olivia');
      const other = await newContact('Oscar');
      const note = await rest('POST', `${base}/api/contacts/${owner}/notes`, { body: 'Private' });
      expect((await rest('GET', `${base}/api/contacts/${other}/notes/${note.body.id}`)).status).toBe(404);
      expect((await rest('PUT', `${base}/api/contacts/${other}/notes/${note.body.id}`, { body: 'x' })).status).toBe(
        404,
      );
      expect((await rest('DELETE', `${base}/api/contacts/${other}/notes/${note.body.id}`)).status).toBe(404);
      expect((await rest('GET', `${base}/api/contacts/${owner}/notes/not-a-uuid`)).status).toBe(404);
      expect((await rest('GET', `${base}/api/contacts/00000000-0000-4000-8000-000000000000/notes`)).status).toBe(404);
      expect(
        (await rest('POST', `${base}/api/contacts/00000000-0000-4000-8000-000000000000/notes`, { body: 'x' })).status,
      ).toBe(404);

      for (const [body, field] of [
        [{}, 'body'],
        [{ body: '   ' }, 'body'],
        [{ body: 5 }, 'body'],
        [{ body: 'x', color: 'red' }, 'color'],
      ] as const) {
        const res = await rest('POST', `${base}/api/contacts/${owner}/notes`, body);
        expect(res.status).toBe(400);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(res.body.errors.map((error: { field: string }) => error.field)).toContain(field);
      }
      expect((await rest('GET', `${base}/api/contacts/${owner}/notes`)).body.total).toBe(1);

      expect((await rest('DELETE', `${base}/api/contacts/${owner}`)).status).toBe(200);
      expect((await rest('GET', `${base}/api/contacts/${owner}/notes`)).status).toBe(404);
      expect((await rest('GET', `${base}/api/contacts/${owner}/notes/${note.body.id}`)).status).toBe(404);
    });
  });

  describe('attachments', () => {
    it('uploads, lists, downloads with the stored headers, and deletes row and bytes', async () => {
      const contactId = await newContact('Ada');
      const content = 'résumé line 1\nline 2\n';
      const created = await upload(
        `${base}/api/contacts/${contactId}/attachments`,
        content,
        'Résumé final;.txt',
        'text/plain',
      );
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        contactId,
        filename: 'Résumé final;.txt',
        contentType: 'text/plain',
        size: Buffer.byteLength(content),
      });
      expect(created.body.storageKey).toBeUndefined();

      const list = await rest('GET', `${base}/api/contacts/${contactId}/attachments`);
      expect(list.status).toBe(200);
      expect(list.body.total).toBe(1);
      expect(list.body.data[0].id).toBe(created.body.id);

      const download = await fetch(`${base}/api/attachments/${created.body.id}`);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe('text/plain');
      expect(download.headers.get('content-length')).toBe(String(Buffer.byteLength(content)));
      // Its bytes never change: a strong ETag, and 304 for a client that holds them.
      expect(download.headers.get('etag')).toBe(`"${created.body.id}"`);
      const held = await fetch(`${base}/api/attachments/${created.body.id}`, {
        headers: { 'if-none-match': `"${created.body.id}"` },
      });
      expect([held.status, await held.text()]).toEqual([304, '']);
      const disposition = download.headers.get('content-disposition')!;
      expect(disposition).toMatch(
        /^attachment; filename="R_sum_ final;.txt"; filename\*=UTF-8''R%C3%A9sum%C3%A9%20final%3B.txt$/,
      );
      expect(await download.text()).toBe(content);

      const storageRoot = path.join(platform.config.dataDir, 'storage');
      expect(filesUnder(storageRoot).length).toBeGreaterThan(0);
      const deleted = await rest('DELETE', `${base}/api/attachments/${created.body.id}`);
      expect(deleted.status).toBe(200);
      expect((await rest('GET', `${base}/api/attachments/${created.body.id}`)).status).toBe(404);
      expect((await rest('DELETE', `${base}/api/attachments/${created.body.id}`)).status).toBe(404);
      expect(filesUnder(path.join(storageRoot, 'contacts', contactId))).toEqual([]);
    });

    it('answers 413 over ATTACHMENT_MAX_BYTES and keeps no row and no file', async () => {
      const contactId = await newContact('Big');
      const res = await upload(
        `${base}/api/contacts/${contactId}/attachments`,
        new Blob([Buffer.alloc(MAX_BYTES * 4, 7)], { type: 'application/octet-stream' }),
        'big.bin',
      );
      expect(res.status).toBe(413);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body).toMatchObject({ status: 413, title: 'Payload Too Large' });
      expect((await rest('GET', `${base}/api/contacts/${contactId}/attachments`)).body.total).toBe(0);
      const rows = await platform.subgraphs.contacts.orm.em
        .fork()
        .getConnection()
        .execute('select count(*)::int as n from contacts.attachment where contact_id = ?', [contactId]);
      expect(rows[0].n).toBe(0);
      expect(filesUnder(path.join(platform.config.dataDir, 'storage', 'contacts', contactId))).toEqual([]);

      // Exactly at the limit is accepted.
      const atLimit = await upload(
        `${base}/api/contacts/${contactId}/attachments`,
        new Blob([Buffer.alloc(MAX_BYTES, 1)]),
        'exact.bin',
      );
      expect(atLimit.status).toBe(201);
      expect(atLimit.body.size).toBe(MAX_BYTES);
    });

    it('answers 400 without a file, 404 for unknown or deleted contacts and unknown attachments', async () => {
      const contactId = await newContact('Eve');
      const noFile = await rest('POST', `${base}/api/contacts/${contactId}/attachments`, { file: 'x' });
      expect(noFile.status).toBe(400);
      expect(noFile.body.errors[0].field).toBe('file');
      const wrongField = await upload(
        `${base}/api/contacts/${contactId}/attachments`,
        'hello',
        'a.txt',
        'text/plain',
        'document',
      );
      expect(wrongField.status).toBe(400);
      expect(wrongField.body.errors[0].field).toBe('file');
      const empty = await upload(`${base}/api/contacts/${contactId}/attachments`, '', 'empty.txt');
      expect(empty.status).toBe(400);

      const unknown = await upload(`${base}/api/contacts/00000000-0000-4000-8000-000000000000/attachments`, 'hello');
      expect(unknown.status).toBe(404);
      const attached = await upload(`${base}/api/contacts/${contactId}/attachments`, 'hello');
      expect(attached.status).toBe(201);
      await rest('DELETE', `${base}/api/contacts/${contactId}`);
      expect((await upload(`${base}/api/contacts/${contactId}/attachments`, 'hello')).status).toBe(404);
      expect((await rest('GET', `${base}/api/contacts/${contactId}/attachments`)).status).toBe(404);
      expect((await rest('GET', `${base}/api/attachments/${attached.body.id}`)).status).toBe(404);
      for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
        expect((await rest('GET', `${base}/api/attachments/${id}`)).status).toBe(404);
        expect((await rest('DELETE', `${base}/api/attachments/${id}`)).status).toBe(404);
      }
    });
  });

  describe('upload reservations', () => {
    const gql = async <Data>(query: string, variables: Record<string, unknown> = {}) => {
      const answer = await graphql<Data>(platform.urls.gateway, query, variables);
      return answer.body;
    };
    const reserveAttachment = async (contactId: string, contentType = 'text/plain') =>
      (
        await gql<{ reserveAttachmentUpload: { uploadToken: string; storageKey: string } }>(
          'mutation ($c: ID!, $t: String) { reserveAttachmentUpload(contactId: $c, filename: "a.txt", contentType: $t) { uploadToken storageKey } }',
          { c: contactId, t: contentType },
        )
      ).data!.reserveAttachmentUpload;
    const importRows = async (id: string) =>
      platform.subgraphs.contacts.orm.em
        .fork()
        .getConnection()
        .execute('select id from contacts.import_upload where id = ?', [id]);
    const idOfStagingKey = (key: string) => key.split('/').pop()!;

    it('keeps a reserved attachment out of every list until its bytes are committed, and refuses bytes that are not what was declared', async () => {
      const storage = createStorage(platform.config);
      const contactId = await newContact('Reserved');
      const slot = await reserveAttachment(contactId);
      expect(slot.storageKey).toMatch(/^staging\/contacts\//);
      expect((await rest('GET', `${base}/api/contacts/${contactId}/attachments`)).body.total).toBe(0);
      await storage.put(slot.storageKey, Readable.from(['hello']), { contentType: 'text/plain', maxBytes: 100 });
      expect((await rest('GET', `${base}/api/contacts/${contactId}/attachments`)).body.total).toBe(0);
      const recorded = await gql<{ recordAttachment: { id: string; size: number } }>(
        'mutation ($t: String!) { recordAttachment(uploadToken: $t) { id size } }',
        { t: slot.uploadToken },
      );
      expect(recorded.data!.recordAttachment.size).toBe(5);
      expect((await rest('GET', `${base}/api/contacts/${contactId}/attachments`)).body.total).toBe(1);
      expect(await storage.size(slot.storageKey)).toBeNull();

      // Declared a PNG, stored text: refused, and neither row nor bytes stay.
      const png = await reserveAttachment(contactId, 'image/png');
      await storage.put(png.storageKey, Readable.from(['not a picture']), { contentType: 'image/png', maxBytes: 100 });
      const refused = await gql<unknown>('mutation ($t: String!) { recordAttachment(uploadToken: $t) { id } }', {
        t: png.uploadToken,
      });
      expect(refused.errors![0].extensions!.code).toBe('BAD_USER_INPUT');
      expect(await storage.size(png.storageKey)).toBeNull();
      expect((await rest('GET', `${base}/api/contacts/${contactId}/attachments`)).body.total).toBe(1);
      const [{ n }] = await platform.subgraphs.contacts.orm.em
        .fork()
        .getConnection()
        .execute('select count(*)::int as n from contacts.attachment where contact_id = ?', [contactId]);
      expect(n).toBe(1);
    });

    it('sweeps attachment and import reservations whose window closed, rows and bytes, and keeps committed attachments', async () => {
      const storage = createStorage(platform.config);
      const { orm } = platform.subgraphs.contacts;
      const contactId = await newContact('Sweep');
      const never = await reserveAttachment(contactId);
      const stranded = await reserveAttachment(contactId);
      // Bytes stored, then the process died before recording them.
      await storage.put(stranded.storageKey, Readable.from(['orphan']), { contentType: 'text/plain', maxBytes: 100 });
      const kept = await upload(`${base}/api/contacts/${contactId}/attachments`, 'kept');
      expect(kept.status).toBe(201);
      const importSlot = (
        await gql<{ reserveContactImport: { uploadId: string; storageKey: string } }>(
          'mutation { reserveContactImport { uploadId storageKey } }',
        )
      ).data!.reserveContactImport;
      await storage.put(importSlot.storageKey, Readable.from(['firstName\nAda\n']), {
        contentType: 'text/csv',
        maxBytes: 100,
      });
      const pendingIds = [never, stranded].map((slot) => idOfStagingKey(slot.storageKey));

      expect(await sweepAttachmentUploads(orm.em.fork(), storage, new Date())).toBe(0);
      expect(await sweepImportUploads(orm.em.fork(), storage, new Date())).toBe(0);
      expect(await importRows(importSlot.uploadId)).toHaveLength(1);

      const later = new Date(Date.now() + 60 * 60 * 1000);
      expect(await sweepAttachmentUploads(orm.em.fork(), storage, later)).toBeGreaterThanOrEqual(2);
      expect(await sweepImportUploads(orm.em.fork(), storage, later)).toBeGreaterThanOrEqual(1);
      expect(await importRows(importSlot.uploadId)).toEqual([]);
      expect(await storage.size(importSlot.storageKey)).toBeNull();
      expect(await storage.size(stranded.storageKey)).toBeNull();
      const [row] = await platform.subgraphs.contacts.orm.em
        .fork()
        .getConnection()
        .execute('select count(*)::int as n from contacts.attachment where contact_id = ?', [contactId]);
      expect(row.n).toBe(1);
      expect(
        pendingIds.every(
          (id) => !filesUnder(path.join(platform.config.dataDir, 'storage')).some((file) => file.includes(id)),
        ),
      ).toBe(true);
      const download = await fetch(`${base}/api/attachments/${kept.body.id}`);
      expect(await download.text()).toBe('kept');
      // A swept reservation cannot be recorded any more.
      const late = await gql<unknown>('mutation ($t: String!) { recordAttachment(uploadToken: $t) { id } }', {
        t: stranded.uploadToken,
      });
      expect(late.errors![0].extensions!.code).toBe('BAD_USER_INPUT');
    });

    it('leaves no reservation and no file behind an import, done or refused', async () => {
      const form = (csv: string) => {
        const body = new FormData();
        body.append('file', new Blob([csv], { type: 'text/csv' }), 'contacts.csv');
        return body;
      };
      expect(
        (
          await fetch(`${base}/api/contacts/import`, {
            method: 'POST',
            body: form('firstName,email\nZed,zed@example.com\n'),
          })
        ).status,
      ).toBe(200);
      expect(
        (await fetch(`${base}/api/contacts/import`, { method: 'POST', body: form('\u0000\u0001binary') })).status,
      ).toBe(400);
      const [{ n }] = await platform.subgraphs.contacts.orm.em
        .fork()
        .getConnection()
        .execute('select count(*)::int as n from contacts.import_upload');
      expect(n).toBe(0);
      expect(filesUnder(path.join(platform.config.dataDir, 'storage', 'imports'))).toEqual([]);
      expect(filesUnder(path.join(platform.config.dataDir, 'storage', 'staging', 'imports'))).toEqual([]);
    });
  });

  describe('pipelines', () => {
    let sales: { id: string; stages: Array<{ id: string; name: string; position: number }> };

    it('has the default Sales pipeline with its six stages in order', async () => {
      const list = await rest('GET', `${base}/api/pipeline`);
      expect(list.status).toBe(200);
      expect(list.body.total).toBe(1);
      sales = list.body.data[0];
      expect(sales).toMatchObject({ name: 'Sales', isDefault: true });
      expect(sales.stages.map((stage) => stage.name)).toEqual([
        'Lead',
        'Qualified',
        'Proposal',
        'Negotiation',
        'Won',
        'Lost',
      ]);
      expect(sales.stages.map((stage) => stage.position)).toEqual([1, 2, 3, 4, 5, 6]);

      const one = await rest('GET', `${base}/api/pipeline/${sales.id}`);
      expect(one.status).toBe(200);
      expect(one.body.stages).toEqual(sales.stages);
      expect((await rest('GET', `${base}/api/pipeline/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
      expect((await rest('GET', `${base}/api/pipeline/bad-id/board`)).status).toBe(404);
    });

    it('moves contacts, keeps the history oldest first, and shows them on the board', async () => {
      const contactId = await newContact('Mover');
      const [lead, qualified, proposal] = sales.stages;
      const toQualified = await rest('PUT', `${base}/api/pipeline/${contactId}/move`, { stageId: qualified.id });
      expect(toQualified.status).toBe(200);
      expect(toQualified.body).toMatchObject({
        contactId,
        pipelineId: sales.id,
        stageId: qualified.id,
        fromStageId: lead.id,
        toStageId: qualified.id,
        moved: true,
      });
      const toProposal = await rest('PUT', `${base}/api/pipeline/${contactId}/move`, { stageId: proposal.id });
      expect(toProposal.body.fromStageId).toBe(qualified.id);
      const again = await rest('PUT', `${base}/api/pipeline/${contactId}/move`, { stageId: proposal.id });
      expect(again.status).toBe(200);
      expect(again.body.moved).toBe(false);

      const history = await rest('GET', `${base}/api/pipeline/${contactId}/history`);
      expect(history.status).toBe(200);
      expect(history.body.total).toBe(2);
      expect(
        history.body.data.map((entry: { fromStageId: string; toStageId: string }) => [
          entry.fromStageId,
          entry.toStageId,
        ]),
      ).toEqual([
        [lead.id, qualified.id],
        [qualified.id, proposal.id],
      ]);
      expect(new Date(history.body.data[0].movedAt).getTime()).toBeLessThanOrEqual(
        new Date(history.body.data[1].movedAt).getTime(),
      );

      const board = await rest('GET', `${base}/api/pipeline/${sales.id}/board`);
      expect(board.status).toBe(200);
      expect(board.body.pipeline).toMatchObject({ id: sales.id, name: 'Sales' });
      expect(board.body.stages.map((stage: { name: string }) => stage.name)).toEqual([
        'Lead',
        'Qualified',
        'Proposal',
        'Negotiation',
        'Won',
        'Lost',
      ]);
      const byName = Object.fromEntries(board.body.stages.map((stage: { name: string }) => [stage.name, stage]));
      expect(byName.Proposal.contacts.map((contact: { id: string }) => contact.id)).toContain(contactId);
      expect(byName.Lead.contacts.map((contact: { id: string }) => contact.id)).not.toContain(contactId);
      expect(byName.Won).toMatchObject({ count: 0, contacts: [] });
      const total = board.body.stages.reduce((sum: number, stage: { count: number }) => sum + stage.count, 0);
      expect(total).toBe((await rest('GET', `${base}/api/contacts`)).body.total);
    });

    it('answers 400 for a missing stageId or a stage of another pipeline, 404 for unknown contact or stage', async () => {
      const created = await graphql<{ createPipeline: { id: string; stages: Array<{ id: string; name: string }> } }>(
        platform.urls.gateway,
        'mutation ($input: PipelineInput!) { createPipeline(input: $input) { id name stages { id name position } } }',
        { input: { name: 'Partners', stages: ['Prospect', 'Signed'] } },
      );
      expect(created.body.errors).toBeUndefined();
      const partners = created.body.data!.createPipeline;
      expect(partners.stages.map((stage) => stage.name)).toEqual(['Prospect', 'Signed']);
      expect((await rest('GET', `${base}/api/pipeline`)).body.total).toBe(2);

      const contactId = await newContact('Stayer');
      const before = (await rest('GET', `${base}/api/pipeline/${contactId}/history`)).body.total;
      const missing = await rest('PUT', `${base}/api/pipeline/${contactId}/move`, {});
      expect(missing.status).toBe(400);
      expect(missing.body.errors[0].field).toBe('stageId');
      const foreign = await rest('PUT', `${base}/api/pipeline/${contactId}/move`, { stageId: partners.stages[0].id });
      expect(foreign.status).toBe(400);
      expect(foreign.body.errors[0].field).toBe('stageId');
      const mismatch = await rest('PUT', `${base}/api/pipeline/${contactId}/move`, {
        stageId: partners.stages[0].id,
        pipelineId: sales.id,
      });
      expect(mismatch.status).toBe(400);
      expect(
        (
          await rest('PUT', `${base}/api/pipeline/${contactId}/move`, {
            stageId: '00000000-0000-4000-8000-000000000000',
          })
        ).status,
      ).toBe(404);
      expect(
        (
          await rest('PUT', `${base}/api/pipeline/00000000-0000-4000-8000-000000000000/move`, {
            stageId: sales.stages[1].id,
          })
        ).status,
      ).toBe(404);
      expect((await rest('GET', `${base}/api/pipeline/00000000-0000-4000-8000-000000000000/history`)).status).toBe(404);
      expect((await rest('GET', `${base}/api/pipeline/${contactId}/history`)).body.total).toBe(before);

      // Naming the stage's pipeline switches the contact over deliberately.
      const switched = await rest('PUT', `${base}/api/pipeline/${contactId}/move`, {
        stageId: partners.stages[1].id,
        pipelineId: partners.id,
      });
      expect(switched.status).toBe(200);
      expect(switched.body).toMatchObject({
        pipelineId: partners.id,
        stageId: partners.stages[1].id,
        fromStageId: sales.stages[0].id,
      });
      const board = await rest('GET', `${base}/api/pipeline/${partners.id}/board`);
      expect(board.body.stages.map((stage: { count: number }) => stage.count)).toEqual([0, 1]);
    });

    it('writes the move and its history entry in one transaction', async () => {
      const contactId = await newContact('Atomic');
      statements = [];
      const res = await rest('PUT', `${base}/api/pipeline/${contactId}/move`, { stageId: sales.stages[3].id });
      expect(res.status).toBe(200);
      const begin = statements.findIndex((sql) => /^\[query\] begin/.test(sql));
      const commit = statements.findIndex((sql) => /^\[query\] commit/.test(sql));
      const placement = statements.findIndex((sql) => /insert into "contacts"\."contact_stage"/i.test(sql));
      const move = statements.findIndex((sql) => /insert into "contacts"\."stage_move"/i.test(sql));
      expect(begin).toBeGreaterThanOrEqual(0);
      expect(placement).toBeGreaterThan(begin);
      expect(move).toBeGreaterThan(begin);
      expect(commit).toBeGreaterThan(Math.max(placement, move));
    });

    it('answers the board of a pipeline with 10,000 contacts in a small fixed number of statements', async () => {
      const connection = platform.subgraphs.contacts.orm.em.fork().getConnection();
      await connection.execute(
        `insert into contacts.contact (id, first_name, email, created_at, updated_at)
         select gen_random_uuid(), 'Seeded ' || g, 'seeded' || g || '@board.example', now() - g * interval '1 second', now()
         from generate_series(1, 10000) g`,
      );
      await connection.execute(
        `insert into contacts.contact_stage (contact_id, pipeline_id, stage_id, moved_at)
         select c.id, ?, ?, now() from contacts.contact c where c.email like '%@board.example' and c.first_name like '%5'`,
        [sales.id, sales.stages[4].id],
      );
      statements = [];
      const board = await rest('GET', `${base}/api/pipeline/${sales.id}/board?limit=5`);
      expect(board.status).toBe(200);
      const byName = Object.fromEntries(board.body.stages.map((stage: { name: string }) => [stage.name, stage]));
      expect(byName.Won.count).toBe(1000);
      expect(byName.Lead.count).toBeGreaterThanOrEqual(9000);
      expect(byName.Won.contacts).toHaveLength(5);
      expect(byName.Lead.contacts).toHaveLength(5);
      // pipeline, its stages, counts of all stages, ranked ids of all stages, those contacts
      expect(statements).toHaveLength(5);
    });
  });
});
