import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';
import { PROJECT_ROOT } from '#lib/paths.js';

/** A subgraph SDL breaking each convention the linter holds (docs/graph.md). */
const BAD_SDL = `
"""A post"""
type Post {
  """Id of the post"""
  id: ID!
  """Where it stands"""
  status: PostStatus!
  """Lower-case field names only"""
  Content: String!
}

"""Where a post stands"""
enum PostStatus {
  draft
  """Published"""
  PUBLISHED
}

type PostsType {
  """The posts"""
  nodes: [Post!]!
}

"""Fields of a post"""
input PostFields {
  """Text"""
  content: String
}

"""Root"""
type Query {
  """Posts as a connection without its cursor arguments"""
  posts: PostConnection!
  getPost(
    """Id"""
    id: ID!
  ): Post
}

"""A page of posts"""
type PostConnection {
  """The edges"""
  edges: [PostEdge!]!
  """Paging"""
  pageInfo: PageInfo!
}

"""One post"""
type PostEdge {
  """The post"""
  node: Post!
  """Its cursor"""
  cursor: String!
}

"""Paging"""
type PageInfo {
  """More after"""
  hasNextPage: Boolean!
  """More before"""
  hasPreviousPage: Boolean!
  """First cursor"""
  startCursor: String
  """Last cursor"""
  endCursor: String
}

"""Root"""
type Mutation {
  """Creates a post"""
  createPost(
    """The post"""
    input: PostFields!
  ): Post
}
`;

describe('the graph linter (@graphql-eslint in npm run lint)', () => {
  const eslint = new ESLint({ cwd: PROJECT_ROOT });

  it('finds no problem in the SDL of each subgraph and the supergraph', async () => {
    const results = await eslint.lintFiles(['schema/*.graphql']);
    expect(results.map((result) => path.relative(PROJECT_ROOT, result.filePath)).sort()).toEqual([
      'schema/contacts.graphql',
      'schema/social.graphql',
      'schema/supergraph.graphql',
      'schema/surveys.graphql',
    ]);
    expect(results.flatMap((result) => result.messages.map((message) => message.message))).toEqual([]);
  }, 60_000);

  it('refuses an SDL that breaks the conventions, naming each break', async () => {
    const [result] = await eslint.lintText(BAD_SDL, { filePath: path.join(PROJECT_ROOT, 'schema/social.graphql') });
    const found = result.messages.map((message) => `${message.ruleId}: ${message.message}`);
    expect(found.sort()).toEqual([
      '@graphql-eslint/naming-convention: Enum value "draft" should be in UPPER_CASE format',
      '@graphql-eslint/naming-convention: Field "Content" should be in camelCase format',
      '@graphql-eslint/naming-convention: Field "getPost" should not have "get" prefix',
      '@graphql-eslint/naming-convention: Input "PostFields" should have one of the following suffixes: Input',
      '@graphql-eslint/naming-convention: Type "PostsType" should not have "Type" suffix',
      '@graphql-eslint/relay-arguments: A field that returns a Connection type must include forward pagination ' +
        'arguments (`first` and `after`), backward pagination arguments (`last` and `before`), or both.',
      '@graphql-eslint/require-description: Description is required for type "PostsType"',
    ]);
  }, 60_000);
});
