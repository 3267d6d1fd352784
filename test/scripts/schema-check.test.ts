import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '#lib/paths.js';
import {
  acceptedChanges,
  baseCommit,
  breakingChanges,
  fileAt,
  SCHEMA_CHANGELOG_PATH,
  SUPERGRAPH_PATH,
  unlistedChanges,
} from '#scripts/schema-changes.js';

const BEFORE = `
enum join__Graph { SOCIAL @join__graph(name: "social", url: "http://social") }
directive @join__graph(name: String!, url: String!) on ENUM_VALUE
enum PostStatus { draft QUEUED }
type Post { id: ID! status: PostStatus! title: String }
type Query { post(id: ID!): Post posts(first: Int): [Post!]! }
`;

/** `PostStatus.draft` renamed, `Post.title` removed, an argument made required; a federation-only change and an addition beside them. */
const AFTER = `
enum join__Graph { SURVEYS @join__graph(name: "surveys", url: "http://surveys") }
directive @join__graph(name: String!, url: String!) on ENUM_VALUE
enum PostStatus { DRAFT QUEUED }
type Post { id: ID! status: PostStatus! content: String }
type Query { post(id: ID!): Post posts(first: Int!): [Post!]! }
`;

describe('the breaking-change check of the supergraph', () => {
  it('finds what breaks a client, and nothing of federation', async () => {
    const changes = await breakingChanges(BEFORE, AFTER);
    expect(changes.map(({ type, path }) => `${type} ${path}`).sort()).toEqual([
      'ENUM_VALUE_REMOVED PostStatus.draft',
      'FIELD_ARGUMENT_TYPE_CHANGED Query.posts.first',
      'FIELD_REMOVED Post.title',
    ]);
  });

  it('fails on a breaking change the changelog does not list, and passes once it does', async () => {
    const changes = await breakingChanges(BEFORE, AFTER);
    const partial = '## A release\n\n- `ENUM_VALUE_REMOVED` `PostStatus.draft`: now `DRAFT`\n';
    expect(
      unlistedChanges(changes, partial)
        .map((change) => change.path)
        .sort(),
    ).toEqual(['Post.title', 'Query.posts.first']);
    const complete = `${partial}* \`FIELD_REMOVED\` \`Post.title\`: use content\n- \`FIELD_ARGUMENT_TYPE_CHANGED\` \`Query.posts.first\`: say how many\n`;
    expect(unlistedChanges(changes, complete)).toEqual([]);
    // Named in prose, not as an entry: not accepted.
    expect(acceptedChanges('We removed `FIELD_REMOVED` `Post.title` last week.').size).toBe(0);
  });

  it('lists every breaking change of the checked-in supergraph since its base', async () => {
    const base = baseCommit(PROJECT_ROOT);
    const before = base && fileAt(PROJECT_ROOT, base, SUPERGRAPH_PATH);
    if (!before) return void console.warn('no committed supergraph before this one: nothing to compare');
    const read = (file: string) => readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
    const changes = await breakingChanges(before, read(SUPERGRAPH_PATH));
    expect(unlistedChanges(changes, read(SCHEMA_CHANGELOG_PATH))).toEqual([]);
  });

  describe('the base it compares with', () => {
    const repo = mkdtempSync(path.join(tmpdir(), 'schema-check-'));
    const git = (...args: string[]) =>
      execFileSync(
        'git',
        ['-c', 'user.name=t', '-c', 'user.email=t@example.org', '-c', 'commit.gpgsign=false', ...args],
        {
          cwd: repo,
          encoding: 'utf8',
        },
      ).trim();
    const commit = (text: string) => {
      writeFileSync(path.join(repo, 'file'), text);
      git('add', 'file');
      git('commit', '-q', '-m', text);
      return git('rev-parse', 'HEAD');
    };
    afterAll(() => rmSync(repo, { recursive: true, force: true }));

    it('is nothing without history, the commit before HEAD on main, and where a branch left main', () => {
      git('init', '-q', '-b', 'main');
      const first = commit('one');
      expect(baseCommit(repo)).toBeUndefined();
      const second = commit('two');
      expect(baseCommit(repo)).toBe(first);
      git('checkout', '-q', '-b', 'feature');
      commit('three');
      commit('four');
      expect(baseCommit(repo)).toBe(second);
      expect(fileAt(repo, second, 'file')).toBe('two');
      expect(fileAt(repo, second, 'missing')).toBeUndefined();
    });
  });
});
