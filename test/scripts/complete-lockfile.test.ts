import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '#lib/paths.js';

const SCRIPT = path.join(PROJECT_ROOT, 'scripts', 'complete-lockfile.mjs');
const committed = readFileSync(path.join(PROJECT_ROOT, 'package-lock.json'), 'utf8');

/** Runs the script on a lock file of the test's own. */
function complete(lock: string): string {
  const file = path.join(workDir, 'package-lock.json');
  writeFileSync(file, lock);
  execFileSync(process.execPath, [SCRIPT, file], { stdio: 'pipe' });
  return readFileSync(file, 'utf8');
}

const workDir = mkdtempSync(path.join(os.tmpdir(), 'lockfile-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** The same object with every key order reversed, as another writer might leave it. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value) || value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, inner]) => [key, reordered(inner)]),
  );
}

describe('scripts/complete-lockfile.mjs', () => {
  it('leaves the committed lock exactly as it is: it is already in the form npm writes, so a fresh npm install changes nothing', () => {
    expect(complete(committed) === committed).toBe(true);
  });

  it("adds a missing platform package back, and writes every key in npm's order whatever order it read", () => {
    const lock = JSON.parse(committed) as {
      packages: Record<string, { optional?: boolean; os?: string[]; cpu?: string[]; integrity?: string }>;
    };
    // An entry the script wrote (npm left it out): some packages' every platform binary is served,
    // and npm writes those in full (integrity, license, engines), which is no work of the script's.
    const platformEntry = Object.keys(lock.packages).find(
      (key) =>
        lock.packages[key].optional && lock.packages[key].os && lock.packages[key].cpu && !lock.packages[key].integrity,
    );
    expect(platformEntry).toBeDefined();
    delete lock.packages[platformEntry!];
    const completed = complete(JSON.stringify(reordered(lock), null, 2));
    expect(completed === committed).toBe(true);
  });
});
