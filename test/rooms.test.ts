import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '#lib/paths.js';

/**
 * The project's rooms and which may import which (test/lib/rooms.test.ts holds the rooms inside lib/).
 * The rooms that run (lib, gateway, subgraphs, rest-adapters) never import their clients: the REST
 * adapters call the gateway, which calls the subgraphs, over HTTP or through what scripts/platform.ts
 * hands them, so none imports another; lib/ imports nothing outside itself. Nor does a running room
 * import build-time code (scripts/codegen/: composition, OpenAPI documents, operation types) or the
 * scripts, benches and tests that start and drive it.
 */
const RUNNING = ['lib', 'gateway', 'subgraphs', 'rest-adapters'] as const;
type RunningRoom = (typeof RUNNING)[number];
const BUILD_TIME = 'scripts/codegen';

/** The rooms each running room may import from, besides its own and lib/. */
const MAY_IMPORT: Record<RunningRoom, readonly string[]> = {
  lib: [],
  subgraphs: [],
  gateway: [],
  'rest-adapters': [],
};

/** `#name/*` of package.json's "imports": the folder each name stands for (its `types` target). */
const SUBPATHS = Object.entries(
  (
    JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      imports: Record<string, { types: string }>;
    }
  ).imports,
).map(([name, target]) => [name.replace(/\*$/, ''), path.posix.normalize(target.types.replace(/\*$/, ''))] as const);

/** The room of a file (a path from the project root): its first folder, scripts/codegen/ apart. */
function roomOf(file: string): string {
  return file.startsWith(`${BUILD_TIME}/`) ? BUILD_TIME : file.split('/')[0];
}

/** The project files a file's text imports (static, dynamic, type-only, re-exports), relative or by `#name/...`. */
function importsOf(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"]([^'"]+)['"]/g)].map(
    ([, spec]) => spec,
  );
  return specifiers.flatMap((spec) => {
    if (spec.startsWith('.')) return [path.posix.normalize(path.posix.join(path.posix.dirname(file), spec))];
    const subpath = SUBPATHS.find(([name]) => spec.startsWith(name));
    return subpath ? [path.posix.join(subpath[1], spec.slice(subpath[0].length))] : [];
  });
}

/** Each import of `file` that breaks the rules above, as `file -> target`. */
function violationsOf(file: string, text: string): string[] {
  const from = roomOf(file) as RunningRoom;
  if (!RUNNING.includes(from)) return [];
  const allowed = new Set([from, 'lib', ...MAY_IMPORT[from]]);
  // A REST service's adapter uses lib/ and its own files (its generated operations among them), no other service's.
  const ownService = (target: string) =>
    roomOf(target) !== 'rest-adapters' || file.split('/').length < 3 || target.split('/')[1] === file.split('/')[1];
  return importsOf(file, text)
    .filter((target) => !allowed.has(roomOf(target)) || !ownService(target))
    .map((target) => `${file} -> ${target}`);
}

function filesOf(room: string): string[] {
  return readdirSync(path.join(PROJECT_ROOT, room), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|mts|js|mjs)$/.test(file))
    .map((file) => path.posix.join(room, file.split(path.sep).join('/')));
}

describe("the project's rooms", () => {
  const files = RUNNING.flatMap(filesOf);
  const read = (file: string) => readFileSync(path.join(PROJECT_ROOT, file), 'utf8');

  it('finds the imports of every running room, relative and by name', () => {
    const targets = files.flatMap((file) => importsOf(file, read(file)));
    expect(targets.some((target) => target.startsWith('lib/'))).toBe(true);
    expect(files.some((file) => /from '#lib\//.test(read(file)))).toBe(true);
    expect(files.some((file) => /from '\.\.?\//.test(read(file)))).toBe(true);
  });

  it('no running room imports its clients, build-time code, scripts, benches or tests', () => {
    expect(files.flatMap((file) => violationsOf(file, read(file)))).toEqual([]);
  });

  it('the check sees a forbidden import, relative or by name (it can fail)', () => {
    expect(violationsOf('gateway/gateway.ts', "import { texts } from '#rest-adapters/operation-texts.js';")).toEqual([
      'gateway/gateway.ts -> rest-adapters/operation-texts.js',
    ]);
    expect(violationsOf('lib/rest/rest.ts', "import type { X } from '../../gateway/gateway.js';")).toHaveLength(1);
    expect(violationsOf('subgraphs/contacts/index.ts', "const m = await import('#gateway/gateway.js');")).toHaveLength(
      1,
    );
    expect(violationsOf('subgraphs/contacts/index.ts', "import '../../rest-adapters/contacts/index.js';")).toHaveLength(
      1,
    );
    expect(
      violationsOf('rest-adapters/social/index.ts', "export { a } from '#subgraphs/social/index.js';"),
    ).toHaveLength(1);
    expect(
      violationsOf('rest-adapters/social/x.ts', "import { a } from '../contacts/operations.generated.js';"),
    ).toHaveLength(1);
    expect(
      violationsOf('gateway/gateway.ts', "import { compose } from '#scripts/codegen/supergraph.js';"),
    ).toHaveLength(1);
    expect(violationsOf('lib/config.ts', "import { x } from '../test/support/x.js';")).toHaveLength(1);
    // And lets through what the rooms may import.
    expect(violationsOf('rest-adapters/social/x.ts', "import { a } from './operations.generated.js';")).toEqual([]);
    expect(
      violationsOf('gateway/gateway.ts', "import { a } from '#lib/config.js'; import express from 'express';"),
    ).toEqual([]);
  });
});
