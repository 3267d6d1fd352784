import { EventEmitter, on } from 'node:events';
import { composeServices } from '@apollo/composition';
import { buildSubgraphSchema } from '@apollo/subgraph';
import {
  execute,
  parse,
  subscribe,
  type ExecutionResult,
  type FormattedExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import { WebSocket } from 'ws';
import { startGateway, type RunningGateway } from '#gateway/gateway.js';
import { loadConfig } from '#lib/config.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import { createLogger } from '#lib/observability/logger.js';
import { whenAborted } from '#lib/stoppable.js';
import type { LocalSubgraph, SubgraphRequest } from '#lib/subgraph/local-subgraph.js';

/**
 * A gateway on two small subgraphs of the test's own, run in its process: `ticks` owns a stream of
 * `Tick` events (`Subscription.ticks(after, owner)`), each naming a `Person` that `people` resolves.
 * It stands for the platform's streams while the transports, the planning and the limits are tested.
 */
export const WEB_ORIGIN = 'http://web.test';

const TICKS_SDL = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { tickCount: Int! }
  type Subscription { ticks(after: String, owner: String): Tick! }
  type Tick { id: ID! cursor: String! n: Int! person: Person }
  type Person @key(fields: "id") { id: ID! }
`;
const PEOPLE_SDL = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { person(id: ID!): Person }
  type Person @key(fields: "id") { id: ID! name: String! friend: Person }
`;

interface Tick {
  id: string;
  cursor: string;
  n: number;
  person: { id: string };
}

interface Context {
  headers: SubgraphRequest['headers'];
}

/** The events of the `ticks` subgraph: kept for replay, announced to live subscribers. */
export class TickFeed {
  readonly ticks: Tick[] = [];
  private readonly emitter = new EventEmitter();

  publish(personId = 'p1'): Tick {
    const n = this.ticks.length + 1;
    const tick = { id: `t${n}`, cursor: `c${String(n).padStart(4, '0')}`, n, person: { id: personId } };
    this.ticks.push(tick);
    this.emitter.emit('tick', tick);
    return tick;
  }

  async *follow(after: string | undefined, signal: AbortSignal): AsyncGenerator<{ ticks: Tick }> {
    const live = on(this.emitter, 'tick', { signal });
    const start = after === undefined ? this.ticks.length : this.ticks.findIndex((tick) => tick.cursor === after) + 1;
    const replayed = this.ticks.slice(start);
    for (const tick of replayed) yield { ticks: tick };
    try {
      for await (const [tick] of live as AsyncIterable<[Tick]>) {
        if (!replayed.includes(tick)) yield { ticks: tick };
      }
    } catch (error) {
      if ((error as Error).name !== 'AbortError') throw error;
    }
  }
}

const signedIn = (context: Context) => {
  if (!context.headers.authorization && !context.headers['x-api-key'])
    throw new AppError(ErrorCode.UNAUTHENTICATED, 'sign in');
};

function ticksSchema(feed: TickFeed): GraphQLSchema {
  return buildSubgraphSchema([
    {
      typeDefs: parse(TICKS_SDL),
      resolvers: {
        Query: { tickCount: () => feed.ticks.length },
        Subscription: {
          ticks: {
            // Refusals are thrown here, before the stream starts, as the platform's subgraphs refuse at subscribe.
            subscribe: (_: unknown, args: { after?: string; owner?: string }, context: Context) => {
              signedIn(context);
              if (args.owner === 'elsewhere') throw new AppError(ErrorCode.FORBIDDEN, 'not yours');
              if (args.after !== undefined && !feed.ticks.some((tick) => tick.cursor === args.after)) {
                throw AppError.badInput('after', 'is not a cursor of this stream');
              }
              const stop = new AbortController();
              const events = feed.follow(args.after, stop.signal);
              return {
                [Symbol.asyncIterator]: () => events,
                next: () => events.next(),
                return: () => {
                  stop.abort();
                  return events.return(undefined);
                },
              };
            },
          },
        },
      } as never,
    },
  ]);
}

function peopleSchema(): GraphQLSchema {
  return buildSubgraphSchema([
    {
      typeDefs: parse(PEOPLE_SDL),
      resolvers: {
        Query: { person: (_: unknown, { id }: { id: string }) => ({ id }) },
        Person: {
          __resolveReference: (reference: { id: string }, context: Context) => {
            signedIn(context);
            return { id: reference.id };
          },
          name: ({ id }: { id: string }) => `Person ${id}`,
          friend: ({ id }: { id: string }) => ({ id: `${id}f` }),
        },
      } as never,
    },
  ]);
}

const formatted = (result: ExecutionResult): FormattedExecutionResult => ({
  ...(result.data !== undefined ? { data: result.data } : {}),
  ...(result.errors?.length ? { errors: result.errors.map((error) => error.toJSON()) } : {}),
});

/** A subgraph in process as lib/subgraph/local-subgraph.ts's contract has it, on graphql-js alone. */
function localOf(schema: GraphQLSchema): LocalSubgraph {
  return {
    async execute(operation, request) {
      const result = await execute({
        schema,
        document: parse(operation.query ?? ''),
        variableValues: operation.variables,
        contextValue: { headers: request.headers },
      });
      return formatted(result);
    },
    subscribe(operation, request, signal) {
      return (async function* () {
        const result = await subscribe({
          schema,
          document: parse(operation.query ?? ''),
          variableValues: operation.variables,
          contextValue: { headers: request.headers },
        });
        if (!(Symbol.asyncIterator in result)) {
          yield formatted(result);
          return;
        }
        // The subscriber left: the source's own return() ends its wait for the next tick.
        const forget = whenAborted(signal, () => void result.return?.());
        try {
          for await (const event of result) yield formatted(event);
        } finally {
          forget();
        }
      })();
    },
  };
}

export interface LiveHarness {
  gateway: RunningGateway;
  feed: TickFeed;
  url: string;
  wsUrl: string;
}

export async function startLiveHarness(env: Record<string, string> = {}): Promise<LiveHarness> {
  const feed = new TickFeed();
  const composed = composeServices([
    { name: 'ticks', url: 'http://ticks.invalid/graphql', typeDefs: parse(TICKS_SDL) },
    { name: 'people', url: 'http://people.invalid/graphql', typeDefs: parse(PEOPLE_SDL) },
  ]);
  if (composed.errors) throw new Error(composed.errors.map((error) => error.message).join('; '));
  const config = loadConfig({
    NODE_ENV: 'development',
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    GATEWAY_PORT: '0',
    CONTACTS_AUTH: 'open',
    CORS_ORIGINS: WEB_ORIGIN,
    ...env,
  });
  const gateway = await startGateway(
    { config, logger: createLogger(config) },
    {
      port: 0,
      subgraphUrls: {},
      supergraphSdl: composed.supergraphSdl,
      localSubgraphs: { ticks: localOf(ticksSchema(feed)), people: localOf(peopleSchema()) },
    },
  );
  return { gateway, feed, url: gateway.url, wsUrl: gateway.url.replace(/^http/, 'ws') };
}

/** A raw graphql-transport-ws client: every message it gets, and how its connection closed. */
export class WsClient {
  readonly messages: Array<{ type: string; id?: string; payload?: any }> = [];
  closed?: { code: number; reason: string };
  private waiters: Array<() => void> = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: Buffer) => {
      this.messages.push(JSON.parse(data.toString()) as { type: string });
      this.wake();
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  static async connect(
    url: string,
    payload: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ): Promise<WsClient> {
    const socket = new WebSocket(url, 'graphql-transport-ws', { headers });
    const client = new WsClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
    client.send({ type: 'connection_init', payload });
    await client.until(() => client.messages.some((message) => message.type === 'connection_ack'));
    return client;
  }

  send(message: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(message));
  }

  subscribe(id: string, query: string, variables: Record<string, unknown> = {}): void {
    this.send({ id, type: 'subscribe', payload: { query, variables } });
  }

  of(id: string) {
    return this.messages.filter((message) => message.id === id);
  }

  async until(done: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline)
        throw new Error(`timed out; messages: ${JSON.stringify(this.messages).slice(0, 2000)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  close(): void {
    this.socket.close();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/** Reads a streamed HTTP answer until `done` holds of the text so far (or the answer ends). */
export async function readUntil(
  response: Response,
  done: (text: string) => boolean,
  timeoutMs = 10_000,
): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = setTimeout(() => void reader.cancel(), timeoutMs);
  try {
    while (!done(text)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    clearTimeout(deadline);
    // Stopping early hangs up: the gateway then ends the subscription behind it.
    await reader.cancel().catch(() => undefined);
  }
  return text;
}
