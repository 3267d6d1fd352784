import { execFileSync } from 'node:child_process';
import { CriticalityLevel, diff, type Change } from '@graphql-inspector/core';
import { buildSchema } from 'graphql';

/** Where the supergraph lives in the repository, and the changelog that accepts its breaking changes. */
export const SUPERGRAPH_PATH = 'schema/supergraph.graphql';
export const SCHEMA_CHANGELOG_PATH = 'schema/CHANGELOG.md';

/**
 * Definitions the supergraph carries for the gateway's query planning (`join__Graph`, `link__Purpose`):
 * which subgraph resolves a field is no client's concern, so moving one is no breaking change.
 */
const FEDERATION_PATH = /^(join__|link__)|\.?@?(join__|link__)/;

/** One change between two schemas as the changelog names it: inspector's change type and its path. */
export interface SchemaChange {
  type: string;
  path: string;
  message: string;
}

/** The supergraph's changes that break a client (a removed value, a narrower argument), federation's own left out. */
export async function breakingChanges(before: string, after: string): Promise<SchemaChange[]> {
  const read = (sdl: string) => buildSchema(sdl, { assumeValidSDL: true });
  const changes: Change[] = await diff(read(before), read(after));
  return changes
    .filter((change) => change.criticality.level === CriticalityLevel.Breaking)
    .filter((change) => !FEDERATION_PATH.test(change.path ?? ''))
    .map((change) => ({ type: String(change.type), path: change.path ?? '', message: change.message }));
}

/**
 * The breaking changes a changelog accepts: each a list item that starts with the change's type and
 * path in backticks, e.g. `` - `ENUM_VALUE_REMOVED` `PostStatus.draft`: renamed DRAFT ``.
 */
export function acceptedChanges(changelog: string): Set<string> {
  const accepted = new Set<string>();
  for (const [, type, path] of changelog.matchAll(/^\s*[-*]\s+`([A-Z_]+)`\s+`([^`]+)`/gm)) {
    accepted.add(`${type} ${path}`);
  }
  return accepted;
}

/** The breaking changes the changelog does not list: each one fails the check. */
export function unlistedChanges(changes: SchemaChange[], changelog: string): SchemaChange[] {
  const accepted = acceptedChanges(changelog);
  return changes.filter((change) => !accepted.has(`${change.type} ${change.path}`));
}

/**
 * The commit to compare with. On a branch: where it left `main` (what merging it would change). On
 * `main` itself, or in a clone without that branch (CI's fresh clone of main): the commit before
 * HEAD, which is `main` before the last merge.
 */
export function baseCommit(cwd: string): string | undefined {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  const attempt = (...args: string[]) => {
    try {
      return git(...args);
    } catch {
      return undefined;
    }
  };
  const head = attempt('rev-parse', 'HEAD');
  const main = attempt('rev-parse', '--verify', '--quiet', 'refs/heads/main');
  if (head && main && head !== main) return attempt('merge-base', 'HEAD', main);
  return attempt('rev-parse', '--verify', '--quiet', 'HEAD~1^{commit}');
}

/** A file as committed in `commit`, or undefined when it was not there. */
export function fileAt(cwd: string, commit: string, file: string): string | undefined {
  try {
    return execFileSync('git', ['show', `${commit}:${file}`], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch {
    return undefined;
  }
}
