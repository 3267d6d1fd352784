import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
  /** What the receiver answered: a status, or nothing (`hang`). */
  answered: Behaviour;
}

/** What the receiver does with the next request: answer a status, or hang without answering. */
export type Behaviour = number | 'hang';

/**
 * A webhook endpoint on a local port, speaking plain HTTP: it records every request and answers
 * as planned for what the request is about (200 when nothing is planned).
 */
export class Receiver {
  readonly received: Received[] = [];
  /** Behaviours planned for requests whose body contains the key (a post id). */
  private readonly plans = new Map<string, Behaviour[]>();
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
      const body = Buffer.concat(chunks).toString('utf8');
      const plan = [...this.plans.entries()].find(([key]) => body.includes(key))?.[1];
      const behaviour = plan?.shift() ?? 200;
      this.received.push({ headers, body, at: Date.now(), answered: behaviour });
      if (behaviour === 'hang') return;
      res
        .writeHead(behaviour, { 'content-type': 'text/plain' })
        .end(behaviour >= 300 && behaviour < 400 ? '' : `answer ${behaviour} ${'x'.repeat(10_000)}`);
    });
  });
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** How to answer the next requests about `key` (200 once these are used up). */
  plan(key: string, ...behaviours: Behaviour[]): void {
    this.plans.set(key, behaviours);
  }

  /** Requests whose body is of event `type` (and whose data matches `postId` when given). */
  of(type: string, postId?: string): Received[] {
    return this.received.filter((request) => {
      const body = JSON.parse(request.body) as { type: string; data: { postId?: string } };
      return body.type === type && (postId === undefined || body.data.postId === postId);
    });
  }
}
