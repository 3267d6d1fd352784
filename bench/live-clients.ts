/**
 * The subscribers `bench:live` opens: graphql-ws clients (the `graphql-transport-ws` protocol, up to
 * 100 subscriptions a connection, as the gateway allows) and GraphQL over SSE streams (one HTTP
 * response each, read by hand so that 10,000 of them cost the bench little). Each delivery is
 * handed to `onEvent` with the moment it arrived.
 */
import http from 'node:http';
import { createClient, type Client } from 'graphql-ws';
import { WebSocket } from 'ws';

export interface Delivery {
  contactId: string;
  at: number;
}

export interface Subscribers {
  /** Subscriptions the server has acknowledged (an SSE stream once its headers came, a WebSocket one once open). */
  opened(): number;
  close(): void;
}

/** A subscription's event, picked out of a GraphQL result: `data.<field>.contactId`. */
function contactIdOf(result: unknown, field: string): string | undefined {
  const data = (result as { data?: Record<string, { contactId?: string } | undefined> } | undefined)?.data;
  return data?.[field]?.contactId;
}

/** `count` subscriptions over graphql-ws, `perConnection` a connection; the credential of connection n is `tokens[n % tokens.length]`. */
export async function openWebSocketSubscribers(
  gatewayUrl: string,
  query: string,
  field: string,
  count: number,
  perConnection: number,
  tokens: string[],
  onEvent: (delivery: Delivery) => void,
): Promise<Subscribers> {
  const clients: Client[] = [];
  let opened = 0;
  const url = gatewayUrl.replace(/^http/, 'ws');
  const connections = Math.ceil(count / perConnection);
  for (let n = 0; n < connections; n++) {
    const authorization = `Bearer ${tokens[n % tokens.length]}`;
    const client = createClient({
      url,
      webSocketImpl: WebSocket,
      lazy: true,
      retryAttempts: 0,
      connectionParams: { authorization },
    });
    clients.push(client);
    const here = Math.min(perConnection, count - n * perConnection);
    const started: Promise<void>[] = [];
    for (let s = 0; s < here; s++) {
      started.push(
        new Promise<void>((resolve, reject) => {
          let acknowledged = false;
          const subscription = client.iterate({ query });
          // graphql-ws tells of a subscription's start only by its first result: the connection's
          // acknowledgement stands for it here, and the bench proves every subscriber live with an event.
          void (async () => {
            try {
              for await (const result of subscription) {
                const contactId = contactIdOf(result, field);
                if (result.errors) throw new Error(JSON.stringify(result.errors));
                if (contactId) onEvent({ contactId, at: performance.now() });
              }
            } catch (error) {
              // graphql-ws ends with the socket's close event when the connection closes, not an Error.
              const ended = error instanceof Error ? error : new Error(`closed: ${JSON.stringify(error)}`);
              if (!acknowledged) reject(ended);
              else console.error(`a WebSocket subscription ended: ${ended.message}`);
            }
          })();
          client.on('connected', () => {
            if (acknowledged) return;
            acknowledged = true;
            opened += 1;
            resolve();
          });
        }),
      );
    }
    await Promise.all(started);
  }
  return {
    opened: () => opened,
    close: () => {
      for (const client of clients) void client.dispose();
    },
  };
}

/** `count` GraphQL-over-SSE streams (a POST asking for `text/event-stream`), `concurrency` opened at once. */
export async function openSseSubscribers(
  gatewayUrl: string,
  query: string,
  field: string,
  count: number,
  tokens: string[],
  onEvent: (delivery: Delivery) => void,
  concurrency = 100,
): Promise<Subscribers> {
  const target = new URL(gatewayUrl);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const requests: http.ClientRequest[] = [];
  let opened = 0;
  const body = JSON.stringify({ query });
  const openOne = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const request = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            accept: 'text/event-stream',
            authorization: `Bearer ${tokens[n % tokens.length]}`,
          },
        },
        (response) => {
          if (response.statusCode !== 200) {
            reject(new Error(`an SSE subscription answered ${response.statusCode}`));
            response.resume();
            return;
          }
          opened += 1;
          resolve();
          let buffered = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            buffered += chunk;
            let end: number;
            while ((end = buffered.indexOf('\n\n')) >= 0) {
              const message = buffered.slice(0, end);
              buffered = buffered.slice(end + 2);
              const data = /^data: ?(.*)$/m.exec(message)?.[1];
              if (!data || !/^event: next$/m.test(message)) continue;
              const contactId = contactIdOf(JSON.parse(data), field);
              if (contactId) onEvent({ contactId, at: performance.now() });
            }
          });
          response.on('error', () => undefined);
        },
      );
      request.on('error', (error) => (opened ? undefined : reject(error)));
      request.end(body);
      requests.push(request);
    });
  for (let next = 0; next < count; next += concurrency) {
    const batch: Promise<void>[] = [];
    for (let n = next; n < Math.min(count, next + concurrency); n++) batch.push(openOne(n));
    await Promise.all(batch);
  }
  return {
    opened: () => opened,
    close: () => {
      for (const request of requests) request.destroy();
      agent.destroy();
    },
  };
}
