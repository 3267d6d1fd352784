import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '#lib/paths.js';

describe('scripts/prune-install.mjs (the image keeps no type declarations or source maps)', () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'prune-install-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  const files = {
    pruned: [
      'pkg/index.d.ts',
      'pkg/esm/index.d.mts',
      'pkg/cjs/index.d.cts',
      'pkg/index.js.map',
      'pkg/esm/index.mjs.map',
      'pkg/index.d.ts.map',
      '@scope/ui/styles.css.map',
    ],
    kept: [
      'pkg/index.js',
      'pkg/esm/index.mjs',
      'pkg/package.json',
      'pkg/src/source.ts',
      'pkg/data/world.map',
      'pkg/test/fixture.js',
      '@scope/ui/styles.css',
      'wasm/engine.wasm',
    ],
  };

  it('deletes type declarations and source maps under node_modules, and nothing else', () => {
    for (const file of [...files.pruned, ...files.kept]) {
      const at = path.join(folder, 'node_modules', file);
      mkdirSync(path.dirname(at), { recursive: true });
      writeFileSync(at, 'x'.repeat(100));
    }
    const run = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'scripts/prune-install.mjs'), folder], {
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`pruned ${files.pruned.length} type declarations and source maps`);
    const present = (file: string) => existsSync(path.join(folder, 'node_modules', file));
    expect(files.pruned.filter(present)).toEqual([]);
    expect(files.kept.filter(present)).toEqual(files.kept);
  });

  it('runs in the image right after the development packages are pruned', () => {
    const dockerfile = readFileSync(path.join(PROJECT_ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/npm prune --omit=dev && node scripts\/prune-install\.mjs\n/);
  });
});
