import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EventStreamReader, type SentEvent } from '#test/support/event-stream.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

function rowsOf(count: number, domain: string): string {
  const lines = ['firstName,lastName,email'];
  for (let n = 1; n <= count; n++) lines.push(`Row${n},Stream,row${n}@${domain}`);
  return lines.join('\n');
}

/** `GET /api/contacts/import/{id}` with `Accept: text/event-stream`: the job's body until it ends. */
describe('contacts: an import followed as server-sent events', () => {
  let platform: TestPlatform;
  let base: string;
  let importer: Record<string, string>;

  beforeAll(async () => {
    platform = await startTestPlatform({ CONTACTS_AUTH: 'required' });
    base = platform.urls.contactsRest;
    importer = {
      authorization: `Bearer ${await platform.token('importer', ['contacts.read', 'contacts.write', 'contacts.import'])}`,
    };
  });
  afterAll(async () => {
    await platform?.stop();
  });

  const startImport = async (csv: string) => {
    const form = new FormData();
    form.append('file', new Blob([csv], { type: 'text/csv' }), 'contacts.csv');
    const response = await fetch(`${base}/api/contacts/import`, {
      method: 'POST',
      body: form,
      headers: { ...importer, prefer: 'respond-async' },
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  };

  it('streams the job as it changes and ends after it succeeded; the JSON answer is the last event', async () => {
    const id = await startImport(rowsOf(3000, 'stream.example'));
    const response = await fetch(`${base}/api/contacts/import/${id}`, {
      headers: { ...importer, accept: 'text/event-stream' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = new EventStreamReader(response);
    const events: SentEvent[] = [];
    for (;;) {
      const event = await reader.next(60_000);
      if (event === 'ended') break;
      events.push(event);
    }
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((event) => event.event === 'import' && event.data.id === id)).toBe(true);
    const processed = events.map((event) => event.data.processed as number);
    expect(processed).toEqual([...processed].sort((a, b) => a - b));
    const last = events.at(-1)!.data;
    expect(last).toMatchObject({ status: 'succeeded', rows: 3000, created: 3000, errors: 0 });

    const json = await rest('GET', `${base}/api/contacts/import/${id}`, undefined, importer);
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toContain('application/json');
    expect(json.body).toEqual(last);
  });

  it('refuses without credentials (401) and an unknown import (404) with a problem before streaming', async () => {
    const anonymous = await fetch(`${base}/api/contacts/import/00000000-0000-4000-8000-000000000000`, {
      headers: { accept: 'text/event-stream' },
    });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    const unknown = await fetch(`${base}/api/contacts/import/00000000-0000-4000-8000-000000000000`, {
      headers: { ...importer, accept: 'text/event-stream' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toContain('application/problem+json');
    expect(await unknown.json()).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    const json = await rest(
      'GET',
      `${base}/api/contacts/import/00000000-0000-4000-8000-000000000000`,
      undefined,
      importer,
    );
    expect(json.status).toBe(404);
  });
});
