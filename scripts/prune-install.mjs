// The production image's last step after `npm prune --omit=dev` (Dockerfile), and what `npm run bench:footprint`
// measures the same way: deletes from an installed node_modules the files nothing runs, the packages' type
// declarations (`.d.ts`, `.d.mts`, `.d.cts`) and source maps (`.js.map` and the like). In the production install
// they were 47 and 44 MB of its 224 (docs/performance.md). Node reads neither when it runs a package: TypeScript
// reads the declarations when it compiles, and source maps are read only with --enable-source-maps, which the
// platform does not set. Plain JavaScript, so that it runs in the image without a build.
// Only these suffixes go: broader cleaners (clean-modules, node-prune) also delete folders named `test`, `docs` or
// `example` by default, which some packages load at run time.
//
//   node scripts/prune-install.mjs [folder]     prunes folder/node_modules (default: this project's)
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** A file no running process reads: a type declaration or a source map (of JavaScript, CSS or a declaration). */
export const UNUSED_AT_RUN_TIME = /\.d\.[cm]?ts$|\.(?:[cm]?js|d\.[cm]?ts|css)\.map$/;

/** Deletes those files under `modules`; answers how many and their bytes. */
export function pruneInstall(modules) {
  let files = 0;
  let bytes = 0;
  const pending = [modules];
  while (pending.length) {
    const folder = pending.pop();
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const file = path.join(folder, entry.name);
      if (entry.isDirectory()) pending.push(file);
      else if (entry.isFile() && UNUSED_AT_RUN_TIME.test(entry.name)) {
        bytes += statSync(file).size;
        rmSync(file);
        files++;
      }
    }
  }
  return { files, bytes };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
  const { files, bytes } = pruneInstall(path.join(root, 'node_modules'));
  console.log(
    `pruned ${files} type declarations and source maps (${(bytes / 1e6).toFixed(1)} MB) from ${root}/node_modules`,
  );
}
