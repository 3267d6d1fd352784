import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A 1x1 PNG, what the stand-in "generates". */
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

export type ImageMode = 'b64_json' | 'url' | 'server-error' | 'not-an-image';

/** A local stand-in for the OpenAI images API: `POST /v1/images/generations`. */
export class FakeImageApi {
  mode: ImageMode = 'b64_json';
  readonly requests: Array<{ authorization?: string; body: Record<string, unknown> }> = [];
  private server?: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const json = (status: number, value: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(value));
        };
        if (req.method === 'GET' && req.url === '/files/image.png') {
          res.writeHead(200, { 'content-type': 'image/png' });
          return void res.end(TINY_PNG);
        }
        if (req.method !== 'POST' || req.url !== '/v1/images/generations')
          return json(404, { error: { message: 'not found' } });
        const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown>;
        this.requests.push({ authorization: req.headers.authorization, body });
        if (req.headers.authorization !== 'Bearer sk-test')
          return json(401, { error: { message: 'Incorrect API key provided' } });
        if (this.mode === 'server-error')
          return json(500, { error: { message: 'The server had an error while processing your request' } });
        if (this.mode === 'not-an-image')
          return json(200, { created: 1, data: [{ b64_json: Buffer.from('hello').toString('base64') }] });
        if (this.mode === 'url') return json(200, { created: 1, data: [{ url: `${this.url}/files/image.png` }] });
        json(200, { created: 1, data: [{ b64_json: TINY_PNG.toString('base64') }] });
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
