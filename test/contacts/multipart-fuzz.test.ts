import 'reflect-metadata';
import { readdirSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

/** One request with exactly these bytes as its body; answers the status and the parsed body. */
function send(url: string, contentType: string, body: Buffer): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', headers: { 'content-type': contentType, 'content-length': String(body.length) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: response.statusCode ?? 0, body: parsed });
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** A client that sends the headers and part of the body it announced, then goes away. */
function sendAndHangUp(url: string, contentType: string, body: Buffer): Promise<void> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(
        `POST ${pathname} HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: ${contentType}\r\ncontent-length: ${body.length + 5000}\r\n\r\n`,
      );
      socket.write(body, () => setTimeout(() => socket.destroy(), 50));
    });
    socket.on('close', () => resolve());
    socket.on('error', () => undefined);
  });
}

const part = (
  boundary: string,
  name: string,
  filename: string | undefined,
  content: string | Buffer,
  type = 'text/csv',
) =>
  Buffer.concat([
    Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; ` +
        `name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n${filename ? `content-type: ${type}\r\n` : ''}\r\n`,
    ),
    Buffer.from(content),
    Buffer.from('\r\n'),
  ]);
const closing = (boundary: string) => Buffer.from(`--${boundary}--\r\n`);
const form = (boundary: string, ...parts: Buffer[]) => Buffer.concat([...parts, closing(boundary)]);

const CSV = 'firstName,email\nFuzz,fuzz@multipart.example\n';

/** A small deterministic generator, so a failing case can be replayed. */
function seeded(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

/** Every file under a folder (none when it does not exist). */
function filesUnder(root: string): string[] {
  try {
    return readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name));
  } catch {
    return [];
  }
}

describe('multipart uploads: broken bodies are 400s, keep nothing, and never take the platform down', () => {
  let platform: TestPlatform;
  let routes: Array<{ name: string; url: string }>;
  let contactId: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ ATTACHMENT_MAX_BYTES: '2048', IMPORT_MAX_BYTES: '4096' });
    const base = platform.urls.contactsRest;
    const contact = await rest('POST', `${base}/api/contacts`, {
      firstName: 'Holder',
      email: 'holder@multipart.example',
    });
    contactId = contact.body.id;
    routes = [
      { name: 'POST /api/contacts/import', url: `${base}/api/contacts/import` },
      { name: 'POST /api/contacts/{id}/attachments', url: `${base}/api/contacts/${contactId}/attachments` },
    ];
  });
  afterAll(async () => {
    await platform?.stop();
  });

  const B = 'fuzzboundary';
  const multipart = `multipart/form-data; boundary=${B}`;
  const cases: Array<{ name: string; contentType: string; body: () => Buffer; status: number; detail: RegExp }> = [
    {
      name: 'a body that ends before its closing boundary (the issue)',
      contentType: multipart,
      body: () =>
        Buffer.concat([
          Buffer.from(`--${B}\r\ncontent-disposition: form-data; name="file"; filename="a.csv"\r\n\r\n`),
          Buffer.from(CSV),
        ]),
      status: 400,
      detail: /not well formed/,
    },
    {
      name: 'a body cut inside the part headers',
      contentType: multipart,
      body: () => Buffer.from(`--${B}\r\ncontent-disposition: form-data; na`),
      status: 400,
      detail: /not well formed/,
    },
    {
      name: 'a file over the size limit',
      contentType: multipart,
      body: () => form(B, part(B, 'file', 'big.csv', `firstName,email\n${'x,y@z.example\n'.repeat(400)}`)),
      status: 413,
      detail: /larger than/,
    },
    {
      name: 'two files in the file field',
      contentType: multipart,
      body: () => form(B, part(B, 'file', 'a.csv', CSV), part(B, 'file', 'b.csv', CSV)),
      status: 400,
      detail: /exactly one file/,
    },
    {
      name: 'a second file in another field',
      contentType: multipart,
      body: () => form(B, part(B, 'file', 'a.csv', CSV), part(B, 'other', 'b.csv', CSV)),
      status: 400,
      detail: /exactly one file/,
    },
    {
      name: 'a body written with another boundary than its header names',
      contentType: 'multipart/form-data; boundary=notTheOneUsed',
      body: () => form(B, part(B, 'file', 'a.csv', CSV)),
      status: 400,
      detail: /not well formed/,
    },
    {
      name: 'an empty body',
      contentType: multipart,
      body: () => Buffer.alloc(0),
      status: 400,
      detail: /not well formed/,
    },
    {
      name: 'no boundary at all',
      contentType: 'multipart/form-data',
      body: () => form(B, part(B, 'file', 'a.csv', CSV)),
      status: 400,
      detail: /boundary/,
    },
    {
      name: 'a form without the file',
      contentType: multipart,
      body: () => form(B, part(B, 'mapping', undefined, '{}')),
      status: 400,
      detail: /required/,
    },
  ];

  it.each(cases.map((c) => [c.name, c] as const))(
    '%s: every upload route answers with a problem naming it, and keeps nothing',
    async (_name, c) => {
      for (const route of routes) {
        const answer = await send(route.url, c.contentType, c.body());
        expect({ route: route.name, status: answer.status }).toEqual({ route: route.name, status: c.status });
        expect(answer.body.detail).toMatch(c.detail);
        if (c.status === 400) expect(answer.body.errors?.[0]?.field).toBe('file');
      }
      expect(filesUnder(path.join(platform.config.dataDir, 'storage'))).toEqual([]);
    },
  );

  it('survives clients that hang up mid-file, and hundreds of randomly cut and corrupted bodies: never a 500, nothing of a refused upload kept', async () => {
    const random = seeded(20261123);
    const whole = form(
      B,
      part(B, 'mapping', undefined, '{"firstName":"firstName","email":"email"}'),
      part(B, 'file', 'a.csv', CSV),
    );
    for (const route of routes) {
      for (let i = 0; i < 5; i++)
        await sendAndHangUp(route.url, multipart, whole.subarray(0, Math.floor(random() * whole.length)));
      for (let i = 0; i < 60; i++) {
        const body = Buffer.from(whole.subarray(0, 1 + Math.floor(random() * (whole.length - 1))));
        // Some cases keep the cut body as it is, others also flip a few bytes.
        if (i % 2)
          for (let flips = 0; flips < 3; flips++) body[Math.floor(random() * body.length)] = Math.floor(random() * 256);
        const answer = await send(route.url, multipart, body);
        expect({ route: route.name, cut: body.length, status: answer.status }).toEqual({
          route: route.name,
          cut: body.length,
          status: 400,
        });
      }
    }
    expect(filesUnder(path.join(platform.config.dataDir, 'storage'))).toEqual([]);
    const attachments = await rest('GET', `${platform.urls.contactsRest}/api/contacts/${contactId}/attachments`);
    expect(attachments.body.total).toBe(0);
    const imported = await rest('GET', `${platform.urls.contactsRest}/api/contacts?search=fuzz@multipart.example`);
    expect(imported.body.total).toBe(0);
  });

  it('still answers everywhere afterwards, and a well-formed upload still works', async () => {
    for (const url of [platform.urls.socialRest, platform.urls.surveysRest, platform.urls.contactsRest]) {
      expect((await rest('GET', `${url}/health`)).status).toBe(200);
    }
    const answer = await send(routes[1].url, multipart, form(B, part(B, 'file', 'ok.txt', 'hello', 'text/plain')));
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ filename: 'ok.txt', size: 5 });
  });
});
