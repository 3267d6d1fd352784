// `npm start`, `npm run token` and the other npm scripts run their compiled entry point through this
// file: it refuses an old Node by name, compiles the TypeScript only when a source changed since the
// last build (a build takes seconds; most runs need none), then runs `dist/<entry>.js` in this same
// process with the arguments it was given. Plain JavaScript, so that it runs before any build and
// on any Node old enough to be refused.
// package.json runs it with `exec`: npm runs a script under `sh -c` and sends SIGTERM and SIGINT to
// that shell, which would die and leave this process running; with `exec` this process is the one npm
// signals, and the one whose parent is npm (it stops when npm is gone, lib/process/main.ts).
//
//   node scripts/launch.mjs scripts/token --sub user-1    builds if needed, then runs dist/scripts/token.js --sub user-1
//   node scripts/launch.mjs --build                       builds now, whatever changed (npm run build)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const dist = path.join(root, 'dist');
/** Written after each successful build; a source newer than it means the build is stale. */
const stamp = path.join(dist, '.build-stamp');
/** What `tsc -p tsconfig.build.json` compiles (its `include`, else tsconfig.json's, less its `exclude`), and its settings. */
function sourceEntries() {
  const readConfig = (name) => JSON.parse(readFileSync(path.join(root, name), 'utf8'));
  const buildConfig = readConfig('tsconfig.build.json');
  const excluded = new Set(buildConfig.exclude ?? []);
  const included = buildConfig.include ?? readConfig('tsconfig.json').include ?? [];
  return [...included.filter((entry) => !excluded.has(entry)), 'tsconfig.json', 'tsconfig.build.json'];
}

function requireNode() {
  const wanted = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).engines?.node ?? '';
  const major = Number(/\d+/.exec(wanted)?.[0] ?? 0);
  if (Number(process.versions.node.split('.')[0]) >= major) return;
  console.error(
    `This project needs Node ${major} or newer (package.json engines: "${wanted}"; .nvmrc), and this is Node ${process.versions.node}.\n` +
      `Switch to Node ${major} (e.g. \`nvm use\`) and run \`npm install\` again: an install made with another Node resolves other packages.`,
  );
  process.exit(1);
}

/** Newest modification time (ms) of the sources: every .ts file and, for deletions and renames, every folder. */
function newestSourceTime() {
  let newest = 0;
  const visit = (entry) => {
    if (!existsSync(entry)) return;
    const info = statSync(entry);
    newest = Math.max(newest, info.mtimeMs);
    if (!info.isDirectory()) return;
    for (const child of readdirSync(entry, { withFileTypes: true })) {
      if (child.isDirectory() || child.name.endsWith('.ts')) visit(path.join(entry, child.name));
    }
  };
  for (const source of sourceEntries()) visit(path.join(root, source));
  return newest;
}

function build() {
  const startedAt = new Date();
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], {
    stdio: 'inherit',
    cwd: root,
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
  // The time the build started: a source saved while it ran still counts as changed next time.
  writeFileSync(stamp, `${startedAt.toISOString()}\n`);
  utimesSync(stamp, startedAt, startedAt);
}

requireNode();
const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/launch.mjs <entry, e.g. scripts/token> [arguments...] | --build');
  process.exit(2);
}
if (entry === '--build') {
  build();
  process.exit(0);
}
const compiled = path.join(dist, `${entry}.js`);
if (!existsSync(compiled) || !existsSync(stamp) || newestSourceTime() > statSync(stamp).mtimeMs) {
  console.error('Sources changed since the last build: compiling (tsc)...');
  build();
}
// The entry reads its arguments from process.argv as if it had been started itself.
process.argv = [process.argv[0], compiled, ...args];
await import(pathToFileURL(compiled).href);
