/**
 * A frontend as a web app would write one: Apollo Client and urql, each with its defaults (Apollo
 * Client POSTs every operation, urql sends queries as GET), talking to the gateway alone. The browser
 * test bundles this file with esbuild into the page it serves on `WEB_URL` and calls the functions
 * below through `globalThis.frontend`; each answers plain JSON the test can read.
 */
import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Client, cacheExchange, fetchExchange } from '@urql/core';
import type { GraphQLFormattedError } from 'graphql';

/** How the page signs its calls: a bearer token from the identity service, the survey session cookie, or nothing. */
export interface Credentials {
  bearer?: string;
  /** Send the `survey_session` cookie along (`credentials: 'include'`), as a page on another port must ask for. */
  cookie?: boolean;
}

/** What a client answered, reduced to what a page looks at: the data and, per error, where and why. */
export interface Answer {
  data: unknown;
  errors: Array<{ path?: ReadonlyArray<string | number>; code?: unknown; serviceName?: unknown }>;
}

const REQUEST_SIGN_IN = gql`
  mutation RequestSignIn($email: String!) {
    requestMagicLink(input: { email: $email }) {
      accepted
    }
  }
`;

const SIGN_IN = gql`
  mutation SignIn($token: String!) {
    verifyMagicLink(input: { token: $token }) {
      user {
        email
      }
    }
  }
`;

const SIGN_OUT = gql`
  mutation SignOut {
    endSurveySession
  }
`;

const CREATE_SURVEY = gql`
  mutation CreateSurvey($input: CreateSurveyInput!) {
    createSurvey(input: $input) {
      id
    }
  }
`;

const DUPLICATES = gql`
  query Duplicates($id: ID!) {
    contact(id: $id) {
      id
      duplicates(first: 5) {
        contact {
          id
        }
        score
        reasons
      }
    }
  }
`;

const SEARCH = gql`
  query SearchContacts($search: String!) {
    contacts(first: 5, search: $search) {
      totalCount
      nodes {
        id
        company
      }
    }
  }
`;

const MERGE = gql`
  mutation Merge($input: MergeContactsInput!) {
    mergeContacts(input: $input) {
      contact {
        id
        phone
      }
      merge {
        id
        mergedIds
      }
    }
  }
`;

const UNDO_MERGE = gql`
  mutation UndoMerge($id: ID!) {
    undoContactMerge(id: $id) {
      merge {
        undoneAt
      }
      restored {
        id
      }
    }
  }
`;

/** One query, three services: contacts (contacts), each contact's surveys (surveys), posts (social). */
const ONE_GRAPH = `
  query OneGraph {
    contacts(first: 10) {
      nodes {
        id
        firstName
        surveys {
          id
          venueName
        }
      }
    }
    surveys(first: 10) {
      nodes {
        id
        venueName
      }
    }
    posts(first: 10) {
      nodes {
        id
        content
        platforms
      }
    }
  }
`;

let gatewayUrl = '';

function apollo(credentials: Credentials = {}): ApolloClient {
  return new ApolloClient({
    link: new HttpLink({
      uri: gatewayUrl,
      headers: credentials.bearer ? { authorization: `Bearer ${credentials.bearer}` } : {},
      // Apollo Client's default is 'same-origin': a page on another port sends no cookie unless it asks.
      ...(credentials.cookie ? { credentials: 'include' } : {}),
    }),
    cache: new InMemoryCache(),
  });
}

function urql(credentials: Credentials = {}): Client {
  return new Client({
    url: gatewayUrl,
    exchanges: [cacheExchange, fetchExchange],
    fetchOptions: {
      headers: credentials.bearer ? { authorization: `Bearer ${credentials.bearer}` } : {},
      ...(credentials.cookie ? { credentials: 'include' as const } : {}),
    },
  });
}

function reduced(errors: ReadonlyArray<GraphQLFormattedError> | undefined): Answer['errors'] {
  return (errors ?? []).map((error) => ({
    path: error.path,
    code: error.extensions?.code,
    serviceName: error.extensions?.serviceName,
  }));
}

/** Runs a mutation with Apollo Client; a refusal rejects (Apollo Client's default error policy). */
async function mutate(mutation: ReturnType<typeof gql>, variables: Record<string, unknown>, credentials: Credentials) {
  const { data } = await apollo(credentials).mutate({ mutation, variables });
  return data;
}

const frontend = {
  connect(url: string): void {
    gatewayUrl = url;
  },

  /** Asks for a sign-in mail; the answer is the same whether or not the address may sign in. */
  requestSignIn: (email: string) => mutate(REQUEST_SIGN_IN, { email }, {}),

  /** Spends the mail's token; the gateway's answer sets the HttpOnly `survey_session` cookie in the browser. */
  signIn: (token: string) => mutate(SIGN_IN, { token }, { cookie: true }),

  signOut: () => mutate(SIGN_OUT, {}, { cookie: true }),

  createSurvey: (input: Record<string, unknown>, credentials: Credentials) =>
    mutate(CREATE_SURVEY, { input }, credentials),

  /** A contact's likely duplicates, as a frontend's "possible duplicates" panel reads them (Apollo Client). */
  async duplicatesOf(id: string, credentials: Credentials) {
    const { data } = await apollo(credentials).query({ query: DUPLICATES, variables: { id } });
    return data;
  },

  /** A search box's answer, as a frontend's contact search reads it (Apollo Client). */
  async searchContacts(search: string, credentials: Credentials) {
    const { data } = await apollo(credentials).query({ query: SEARCH, variables: { search } });
    return data;
  },

  mergeContacts: (input: Record<string, unknown>, credentials: Credentials) => mutate(MERGE, { input }, credentials),

  undoContactMerge: (id: string, credentials: Credentials) => mutate(UNDO_MERGE, { id }, credentials),

  /**
   * Runs ONE_GRAPH with either client. Apollo Client is told `errorPolicy: 'all'`, which is how it
   * keeps a partial answer (its default drops `data` when any error comes along); urql keeps both.
   */
  async readOneGraph(client: 'apollo' | 'urql', credentials: Credentials): Promise<Answer> {
    if (client === 'apollo') {
      const { data, error } = await apollo(credentials).query({ query: gql(ONE_GRAPH), errorPolicy: 'all' });
      // Anything but GraphQL errors (the network, an HTTP refusal) is no answer at all.
      if (error && !CombinedGraphQLErrors.is(error)) throw new Error(`Apollo Client: ${error.message}`);
      return { data: data ?? null, errors: reduced(error?.errors) };
    }
    const { data, error } = await urql(credentials).query(ONE_GRAPH, {}).toPromise();
    if (error?.networkError) throw error.networkError;
    return { data: data ?? null, errors: reduced(error?.graphQLErrors) };
  },
};

export type Frontend = typeof frontend;

(globalThis as unknown as { frontend: Frontend }).frontend = frontend;
