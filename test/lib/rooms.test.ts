import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '#lib/paths.js';

/**
 * The rooms of `lib/`, lowest first (lib/README.md says what each serves). A file may import from its
 * own room and the rooms below it, never from one above: so the rooms can be read bottom up, and no
 * cycle can run between two of them. `''` is the foundation, the files directly in `lib/`.
 */
const ROOMS = ['', 'observability', 'data', 'http', 'storage', 'subgraph', 'rest', 'process'];
/** `subgraph` and `rest` stand side by side: neither may import the other. */
const SIBLINGS = new Set(['subgraph>rest', 'rest>subgraph']);

const LIB = path.join(PROJECT_ROOT, 'lib');

function libFiles(): string[] {
  return readdirSync(LIB, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.split(path.sep).join('/'));
}

const roomOf = (file: string) => (file.includes('/') ? file.split('/')[0] : '');

/** Each lib file's imports of other lib files (by path relative to lib/), static, dynamic and type-only. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(LIB, file), 'utf8');
  const found = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g)];
  return found
    .map(([, spec]) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, '.ts'))
    .filter((target) => !target.startsWith('..'));
}

describe("lib/'s rooms", () => {
  const files = libFiles();

  it('every file lives in a known room', () => {
    expect(files.filter((file) => !ROOMS.includes(roomOf(file)))).toEqual([]);
  });

  it('no file imports from a room above its own (or from its sibling)', () => {
    const upward = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => {
          const [from, to] = [roomOf(file), roomOf(target)];
          return ROOMS.indexOf(to) > ROOMS.indexOf(from) || SIBLINGS.has(`${from}>${to}`);
        })
        .map((target) => `${file} -> ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it('no cycle among the files of lib/', () => {
    const graph = new Map(files.map((file) => [file, importsOf(file)]));
    const done = new Set<string>();
    const cycles: string[] = [];
    const visit = (file: string, trail: string[]) => {
      if (trail.includes(file)) return void cycles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '));
      if (done.has(file)) return;
      for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
      done.add(file);
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('the check sees an upward import (it can fail)', () => {
    expect(ROOMS.indexOf(roomOf('rest/rest.ts')) > ROOMS.indexOf(roomOf('http/http.ts'))).toBe(true);
  });
});
