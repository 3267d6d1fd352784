import { expect } from '@jest/globals';
import { rest } from './platform.js';

/** A versioned REST resource (lib/rest/conditional-requests.ts): where it is read, and a change to make to it. */
export interface VersionedResource {
  url: string;
  headers: Record<string, string>;
  /** A change (PUT or PATCH) whose body sets `field` to the value given. */
  change: { method: 'PUT' | 'PATCH'; body: (value: string) => Record<string, unknown>; field: string };
}

const STRONG_TAG = /^"\d+"$/;

async function read(resource: VersionedResource) {
  const answer = await rest('GET', resource.url, undefined, resource.headers);
  expect(answer.status).toBe(200);
  return { etag: String(answer.headers.get('etag')), body: answer.body as Record<string, unknown> };
}

const change = (resource: VersionedResource, value: string, ifMatch?: string) =>
  rest(resource.change.method, resource.url, resource.change.body(value), {
    ...resource.headers,
    ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }),
  });

/** A GET carries a strong ETag, the body keeps its shape, and If-None-Match answers 304 while it holds. */
export async function expectEntityTags(resource: VersionedResource): Promise<void> {
  const first = await read(resource);
  expect(first.etag).toMatch(STRONG_TAG);
  expect(first.body).not.toHaveProperty('version');

  const same = await rest('GET', resource.url, undefined, { ...resource.headers, 'if-none-match': first.etag });
  expect({ status: same.status, body: same.body }).toEqual({ status: 304, body: undefined });
  // If-None-Match compares weakly (RFC 9110 §13.1.2), and a list matches when any member does.
  const weak = await rest('GET', resource.url, undefined, {
    ...resource.headers,
    'if-none-match': `"0", W/${first.etag}`,
  });
  expect(weak.status).toBe(304);

  const changed = await change(resource, 'tagged once');
  expect(changed.status).toBe(200);
  const second = await read(resource);
  expect(second.etag).toMatch(STRONG_TAG);
  expect(second.etag).not.toBe(first.etag);
  const stale = await rest('GET', resource.url, undefined, { ...resource.headers, 'if-none-match': first.etag });
  expect(stale.status).toBe(200);
  expect(stale.body).toEqual(second.body);
}

/**
 * A change with If-Match: the current ETag goes through and answers the new one; a stale one, a weak
 * one or one of no version is a 412 problem naming If-Match, and the resource stays as it was.
 */
export async function expectConditionalChanges(resource: VersionedResource): Promise<void> {
  const { field } = resource.change;
  const before = await read(resource);

  const current = await change(resource, 'matched', before.etag);
  expect(current.status).toBe(200);
  expect(current.body[field]).toBe('matched');
  expect(current.body).not.toHaveProperty('version');
  const after = await read(resource);
  expect(current.headers.get('etag')).toBe(after.etag);
  expect(after.etag).not.toBe(before.etag);

  for (const refused of [before.etag, `W/${after.etag}`, '"not-a-version"']) {
    const answer = await change(resource, 'refused', refused);
    expect({ refused, status: answer.status, type: answer.headers.get('content-type') }).toEqual({
      refused,
      status: 412,
      type: expect.stringContaining('application/problem+json'),
    });
    expect(answer.body).toMatchObject({ status: 412, code: 'PRECONDITION_FAILED' });
    expect(answer.body.errors).toEqual([{ field: 'If-Match', message: expect.any(String) }]);
  }
  const unchanged = await read(resource);
  expect(unchanged).toEqual(after);

  // `*`: any current version; no If-Match at all: as before conditional requests.
  expect((await change(resource, 'any version', '*')).status).toBe(200);
  expect((await change(resource, 'unconditional')).status).toBe(200);
}

/** Two writers holding the same ETag at once: exactly one wins, the other is refused and changes nothing. */
export async function expectOneOfTwoWriters(resource: VersionedResource): Promise<void> {
  const { field } = resource.change;
  const held = await read(resource);
  const answers = await Promise.all([
    change(resource, 'first writer', held.etag),
    change(resource, 'second writer', held.etag),
  ]);
  expect(answers.map((answer) => answer.status).sort()).toEqual([200, 412]);
  const winner = answers.find((answer) => answer.status === 200)!;
  const now = await read(resource);
  expect(now.body[field]).toBe(winner.body[field]);
  expect(now.etag).toBe(winner.headers.get('etag'));
}

/** DELETE with a stale If-Match is a 412 and the resource stays; with the current one it goes; then nothing matches, not even `*`. */
export async function expectConditionalDelete(resource: VersionedResource, deletedStatus: number): Promise<void> {
  const before = await read(resource);
  expect((await change(resource, 'moved on')).status).toBe(200);
  const stale = await rest('DELETE', resource.url, undefined, { ...resource.headers, 'if-match': before.etag });
  expect(stale.status).toBe(412);
  const current = await read(resource);
  const deleted = await rest('DELETE', resource.url, undefined, { ...resource.headers, 'if-match': current.etag });
  expect(deleted.status).toBe(deletedStatus);
  expect((await rest('GET', resource.url, undefined, resource.headers)).status).toBe(404);
  const gone = await rest('DELETE', resource.url, undefined, { ...resource.headers, 'if-match': '*' });
  expect(gone.status).toBe(412);
  expect(gone.body.errors).toEqual([{ field: 'If-Match', message: expect.any(String) }]);
}
