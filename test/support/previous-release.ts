import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '#lib/paths.js';

const run = promisify(execFile);

/**
 * The release a rolling upgrade starts from. There are no release tags, so it is a commit: the last
 * one that landed (3173d1d) before a commit added a migration (ContactSearchQuery: a function the
 * search statements call), so the upgrade runs a real expand migration under the previous release's
 * load. When a commit adds a migration, move this to the release before it.
 */
export const PREVIOUS_RELEASE = '3173d1d82d121c8b34b2923e9b293bf52ef7d0b3';

const git = (...args: string[]) => run('git', args, { cwd: PROJECT_ROOT, maxBuffer: 256 * 1024 * 1024 });

/**
 * Makes sure `commit` is in this clone: a shallow clone (CI's may be) fetches it, and when it still is
 * not there the test fails saying so, never skips.
 */
async function haveCommit(commit: string): Promise<void> {
  const present = () =>
    git('cat-file', '-e', `${commit}^{commit}`).then(
      () => true,
      () => false,
    );
  if (await present()) return;
  await git('fetch', '--no-tags', 'origin', commit).catch(() => undefined);
  if (!(await present())) await git('fetch', '--no-tags', '--unshallow', 'origin').catch(() => undefined);
  if (!(await present()))
    throw new Error(
      `the previous release ${commit} is not in this clone and could not be fetched from origin: ` +
        'the rolling-upgrade test needs the history (git fetch --unshallow)',
    );
}

/**
 * Whether the previous release runs on this tree's node_modules: every package its lock names is in this
 * lock at the same place, version and integrity (this release only added packages), so it would load the
 * very same files it would after its own `npm ci`.
 */
async function sameInstall(commit: string): Promise<boolean> {
  const packages = (text: string) => (JSON.parse(text) as { packages: Record<string, unknown> }).packages;
  const theirs = packages((await git('show', `${commit}:package-lock.json`)).stdout);
  const ours = packages(readFileSync(path.join(PROJECT_ROOT, 'package-lock.json'), 'utf8'));
  return Object.entries(theirs).every(
    ([where, entry]) => where === '' || JSON.stringify(entry) === JSON.stringify(ours[where]),
  );
}

/** A git worktree of `commit` in a temporary folder, installed and built, ready to start; `remove` takes it away. */
export async function checkOutRelease(commit: string): Promise<{ root: string; remove(): Promise<void> }> {
  await haveCommit(commit);
  const root = mkdtempSync(path.join(os.tmpdir(), 'previous-release-'));
  await git('worktree', 'add', '--detach', root, commit);
  const remove = async () => {
    await git('worktree', 'remove', '--force', root).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    if (await sameInstall(commit))
      symlinkSync(realpathSync(path.join(PROJECT_ROOT, 'node_modules')), path.join(root, 'node_modules'), 'dir');
    else await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    await run(process.execPath, ['scripts/launch.mjs', '--build'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    await remove();
    throw error;
  }
  return { root, remove };
}
