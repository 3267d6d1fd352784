/**
 * A frontend that follows the live graph as a web app would: Apollo Client with its defaults (its
 * `HttpLink` asks for a subscription over multipart HTTP, no extra link) follows `contentEvents`, and
 * urql with graphql-ws through its `subscriptionExchange` follows `contactImport(id)` and
 * `contactEvents`. Each stream keeps the cursor of the last event it got; when a stream ends (a
 * restart of the gateway ends every stream) the page notes it, and `resume` subscribes again with
 * `after: <that cursor>`. The browser test bundles this file with esbuild into the page it serves on
 * `WEB_URL` and calls the functions below through `globalThis.frontend`; each answers plain JSON.
 */
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Client, cacheExchange, fetchExchange, subscriptionExchange } from '@urql/core';
import { createClient, type Client as WsClient } from 'graphql-ws';

/** What a stream of the page saw: its events in order of arrival, and each way it ended. */
export interface StreamLog<Event> {
  events: Event[];
  /** `complete` (the server ended it) or `error: <message>`, one per end, in order. */
  ends: string[];
  /** The cursor the page resumes from: the last event's. */
  after: string | null;
  /** Errors the server sent inside results (a refusal has its `extensions.code`). */
  errors: unknown[];
  /** Whether a subscription is open (subscribed, not ended). */
  following: boolean;
}

export interface ContentEventSeen {
  cursor: string;
  type: string;
  contentId: string;
  post: { id: string; content: string; status: string } | null;
}

export interface ContactEventSeen {
  cursor: string;
  type: string;
  contactId: string;
  contact: { id: string; firstName: string | null } | null;
}

export interface ImportSeen {
  id: string;
  status: string;
  rows: number | null;
  processed: number;
  created: number;
}

const FOLLOW_CONTENT = gql`
  subscription FollowContent($after: String) {
    contentEvents(after: $after) {
      cursor
      type
      contentId
      post {
        id
        content
        status
      }
    }
  }
`;

const FOLLOW_IMPORT = `
  subscription FollowImport($id: ID!) {
    contactImport(id: $id) {
      id
      status
      rows
      processed
      created
    }
  }
`;

const FOLLOW_CONTACTS = `
  subscription FollowContacts($after: String) {
    contactEvents(after: $after) {
      cursor
      type
      contactId
      contact {
        id
        firstName
      }
    }
  }
`;

let gatewayUrl = '';
let bearer = '';

const newLog = <Event>(): StreamLog<Event> => ({ events: [], ends: [], after: null, errors: [], following: false });
const content = newLog<ContentEventSeen>();
const contacts = newLog<ContactEventSeen>();
const imports = new Map<string, StreamLog<ImportSeen>>();

/** Apollo Client as a frontend sets it up for queries; subscriptions need nothing more. */
function apollo(): ApolloClient {
  return new ApolloClient({
    link: new HttpLink({ uri: gatewayUrl, headers: { authorization: `Bearer ${bearer}` } }),
    cache: new InMemoryCache(),
  });
}

/**
 * urql over graphql-ws. `retryAttempts: 0`: graphql-ws would otherwise reconnect by itself and send
 * the subscription again with the variables it first had, that is without the cursor reached since;
 * the page resubscribes itself, with `after`. `ended` hears how each subscription ended.
 */
function urql(ended: (how: string) => void): { client: Client; ws: WsClient } {
  const ws = createClient({
    url: gatewayUrl.replace(/^http/, 'ws'),
    connectionParams: { Authorization: `Bearer ${bearer}` },
    retryAttempts: 0,
  });
  const client = new Client({
    url: gatewayUrl,
    exchanges: [
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({
            unsubscribe: ws.subscribe(
              { ...request, query: request.query ?? '' },
              {
                next: (value) => sink.next(value as never),
                error: (error) => {
                  ended(described(error));
                  sink.error(error);
                },
                complete: () => {
                  ended('complete');
                  sink.complete();
                },
              },
            ),
          }),
        }),
      }),
    ],
  });
  return { client, ws };
}

/** How a stream ended: a WebSocket's close code, or an error's message. */
function described(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && !(error instanceof Error))
    return `closed: ${String(error.code)}`;
  return `error: ${error instanceof Error ? error.message : JSON.stringify(error)}`;
}

function followContent(): void {
  content.following = true;
  apollo()
    .subscribe({ query: FOLLOW_CONTENT, variables: { after: content.after } })
    .subscribe({
      next: ({ data, error }) => {
        if (error) content.errors.push(error.message);
        const event = (data as { contentEvents?: ContentEventSeen } | undefined)?.contentEvents;
        if (!event) return;
        content.events.push(event);
        content.after = event.cursor;
      },
      error: (error) => {
        content.following = false;
        content.ends.push(described(error));
      },
      complete: () => {
        content.following = false;
        content.ends.push('complete');
      },
    });
}

let contactsWs: WsClient | undefined;

function followContacts(): void {
  void contactsWs?.dispose();
  contacts.following = true;
  const { client, ws } = urql((how) => {
    contacts.following = false;
    contacts.ends.push(how);
  });
  contactsWs = ws;
  client.subscription(FOLLOW_CONTACTS, { after: contacts.after }).subscribe((result) => {
    if (result.error?.graphQLErrors.length) contacts.errors.push(...result.error.graphQLErrors);
    if (result.hasNext === false) return;
    const event = result.data?.contactEvents as ContactEventSeen | undefined;
    if (!event) return;
    contacts.events.push(event);
    contacts.after = event.cursor;
  });
}

const frontend = {
  connect(url: string, token: string): void {
    gatewayUrl = url;
    bearer = token;
  },

  /** Apollo Client follows `contentEvents` from now on (or, once it has a cursor, from it). */
  followContent,
  contentLog: (): StreamLog<ContentEventSeen> => content,

  /** urql follows `contactEvents` over graphql-ws from now on (or from the page's last cursor). */
  followContacts,
  contactsLog: (): StreamLog<ContactEventSeen> => contacts,

  /** urql follows one import over graphql-ws until it ends. */
  followImport(id: string): void {
    const log = newLog<ImportSeen>();
    imports.set(id, log);
    const { client } = urql((how) => log.ends.push(how));
    client.subscription(FOLLOW_IMPORT, { id }).subscribe((result) => {
      if (result.error?.graphQLErrors.length) log.errors.push(...result.error.graphQLErrors);
      // When a subscription ends, urql hands its last result once more with `hasNext: false`: the end, not a new event.
      if (result.hasNext === false) return;
      if (result.data?.contactImport) log.events.push(result.data.contactImport as ImportSeen);
    });
  },
  importLog: (id: string): StreamLog<ImportSeen> | undefined => imports.get(id),
};

export type Frontend = typeof frontend;

(globalThis as unknown as { frontend: Frontend }).frontend = frontend;
