// `npm start`, `npm run token` and the other npm scripts run their compiled entry point through this
// file: it refuses an old Node by name, compiles the TypeScript only when a source changed since the
// last build (most runs need none), then runs `dist/<entry>.js` in this same process with the
// arguments it was given. Plain JavaScript, so that it runs before any build and on any Node old
// enough to be refused.
// It compiles with swc, one file at a time and only the files changed since the last build: swc strips
// the types without checking them (the whole project in about a second, where tsc took 20 s), and emits
// the legacy decorators and their metadata that type-graphql and MikroORM read, as jest.config.js asks
// of @swc/jest. The types are checked by `npm test` and `npm run typecheck` (tsc --noEmit).
// package.json runs it with `exec`: npm runs a script under `sh -c` and sends SIGTERM and SIGINT to
// that shell, which would die and leave this process running; with `exec` this process is the one npm
// signals, and the one whose parent is npm (it stops when npm is gone, lib/process/main.ts).
//
//   node scripts/launch.mjs scripts/token --sub user-1    builds if needed, then runs dist/scripts/token.js --sub user-1
//   node scripts/launch.mjs --build                       builds everything now, whatever changed (npm run build)
import module from 'node:module';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const dist = path.join(root, 'dist');
/**
 * Written after each successful build, its time the build's start: a source newer than it changed
 * since. It lists the sources compiled because an included one imports them (bench/ imports
 * test/support/), which the next checks watch too.
 */
const stamp = path.join(dist, '.build-stamp');
/**
 * The browser files the platform serves from development dependencies, copied into dist/ by every
 * build: production installs no development dependency (the image prunes them after the build), and
 * these packages are many times the files the pages load. swagger-ui-dist is 12 MB on disk, of
 * which the API reference page (lib/rest/api-reference.ts) loads two files, 1.9 MB.
 * lib/rest/package-assets.ts serves them from here when the package is not installed.
 */
const browserAssets = { 'swagger-ui-dist': ['swagger-ui-bundle.js', 'swagger-ui.css'] };
const browserAssetsFolder = path.join(dist, 'browser-assets');
/** A change to one of these may change every output: the whole project is compiled again. */
const settingsFiles = ['tsconfig.json', 'tsconfig.build.json', 'scripts/launch.mjs'];

/** What `tsc -p tsconfig.build.json` would compile: its `include` (else tsconfig.json's) less its `exclude`. */
function includedFolders() {
  const readConfig = (name) => JSON.parse(readFileSync(path.join(root, name), 'utf8'));
  const buildConfig = readConfig('tsconfig.build.json');
  const excluded = new Set(buildConfig.exclude ?? []);
  const included = buildConfig.include ?? readConfig('tsconfig.json').include ?? [];
  return included.filter((entry) => !excluded.has(entry));
}

/** swc's settings for one file: tsconfig.json's target, modules and source maps, with legacy decorators and their metadata. */
function swcOptions(source, output) {
  return {
    filename: source,
    sourceMaps: true,
    // As tsc writes it: the source's path relative to the map, and no source text inside.
    sourceFileName: path.relative(path.dirname(output), source),
    inlineSourcesContent: false,
    swcrc: false,
    configFile: false,
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
      target: 'es2023',
      // Helpers inlined: dist/ needs nothing from swc at run time (the image prunes dev dependencies).
      externalHelpers: false,
    },
    module: { type: 'es6', resolveFully: false },
  };
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

/** The previous build: its start time (ms) and the sources it compiled from outside the included folders. */
function lastBuild() {
  if (!existsSync(stamp)) return undefined;
  const startedAt = statSync(stamp).mtimeMs;
  try {
    const { imported } = JSON.parse(readFileSync(stamp, 'utf8'));
    return { startedAt, imported: Array.isArray(imported) ? imported : [] };
  } catch {
    // A stamp written by an older launcher (a date): nothing is known of its imported sources.
    return { startedAt, imported: [], unknown: true };
  }
}

/**
 * The sources (paths relative to the root), each with its modification time (ms), and the newest
 * time of all, folders included: a deleted or renamed file changes its folder's time.
 */
function scanSources(imported) {
  const sources = new Map();
  let newest = 0;
  const visit = (relative) => {
    const absolute = path.join(root, relative);
    if (!existsSync(absolute)) return;
    const info = statSync(absolute);
    newest = Math.max(newest, info.mtimeMs);
    if (!info.isDirectory()) {
      if (relative.endsWith('.ts') && !relative.endsWith('.d.ts')) sources.set(relative, info.mtimeMs);
      return;
    }
    for (const child of readdirSync(absolute, { withFileTypes: true })) {
      if (child.isDirectory() || child.name.endsWith('.ts')) visit(path.join(relative, child.name));
    }
  };
  for (const folder of includedFolders()) visit(folder);
  for (const file of imported) visit(file);
  return { sources, newest };
}

const newestSettingsTime = () =>
  Math.max(
    ...settingsFiles
      .map((file) => path.join(root, file))
      .map((file) => (existsSync(file) ? statSync(file).mtimeMs : 0)),
  );

const outputOf = (source) => path.join(dist, source.replace(/\.ts$/, '.js'));

/**
 * The imports of compiled code that name a TypeScript source, relative to the root: relative ones
 * (`./x.js` for `./x.ts`) and package.json's subpath imports (`#test/support/x.js` for test/support/x.ts).
 */
function importedSources(source, code) {
  const found = [];
  for (const match of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']((?:\.\.?\/|#)[^"']+)\.js["']/g)) {
    const named = match[1];
    const target = named.startsWith('#') ? `${named.slice(1)}.ts` : path.join(path.dirname(source), `${named}.ts`);
    if (existsSync(path.join(root, target))) found.push(target);
  }
  return found;
}

/** Copies each package's browser files, with its package.json (its version names the files' URLs). */
function copyBrowserAssets() {
  const require = module.createRequire(import.meta.url);
  for (const [pkg, files] of Object.entries(browserAssets)) {
    const from = path.dirname(require.resolve(`${pkg}/package.json`));
    const to = path.join(browserAssetsFolder, pkg);
    mkdirSync(to, { recursive: true });
    for (const file of ['package.json', ...files]) copyFileSync(path.join(from, file), path.join(to, file));
  }
}

/** Removes the outputs of sources that are gone, so that nothing imports a deleted module's old code. */
function removeOrphans(folder = dist) {
  if (!existsSync(folder)) return;
  for (const child of readdirSync(folder, { withFileTypes: true })) {
    const absolute = path.join(folder, child.name);
    if (absolute === browserAssetsFolder) continue;
    if (child.isDirectory()) removeOrphans(absolute);
    else if (child.name.endsWith('.js')) {
      const source = path.join(root, path.relative(dist, absolute).replace(/\.js$/, '.ts'));
      if (!existsSync(source)) for (const file of [absolute, `${absolute}.map`]) rmSync(file, { force: true });
    }
  }
}

/**
 * Compiles the sources that changed since the last build (every source when `everything`), and the
 * sources they import from outside the included folders. Returns how many it compiled. Stops the
 * process on a syntax error, leaving the stamp as it was so the next run tries again.
 */
async function build(everything) {
  const startedAt = new Date();
  const previous = everything ? undefined : lastBuild();
  const full = !previous || previous.unknown || newestSettingsTime() > previous.startedAt;
  // The imported sources of the last build are found again by following the imports.
  const { sources } = scanSources([]);
  // A development dependency, like typescript before it: the image builds dist/ before it prunes them.
  const { transformFile } = await import('@swc/core').catch((error) => {
    console.error(`Compiling needs the development dependencies (npm install, without --omit=dev): ${error.message}`);
    process.exit(1);
  });
  const included = new Set(sources.keys());
  const imported = new Set();
  const done = new Set();
  const failures = [];
  const compile = async (source) => {
    done.add(source);
    const output = outputOf(source);
    const absolute = path.join(root, source);
    const stale =
      full || !existsSync(output) || (sources.get(source) ?? statSync(absolute).mtimeMs) > previous.startedAt;
    let code;
    if (stale) {
      try {
        const result = await transformFile(absolute, swcOptions(absolute, output));
        code = result.code;
        mkdirSync(path.dirname(output), { recursive: true });
        const mapName = `${path.basename(output)}.map`;
        writeFileSync(output, `${code}\n//# sourceMappingURL=${mapName}\n`);
        writeFileSync(`${output}.map`, result.map ?? '{}');
      } catch (error) {
        failures.push(`${source}: ${error?.message ?? error}`);
        return 0;
      }
    } else code = readFileSync(output, 'utf8');
    // Sources outside the included folders are compiled only because an included one imports them.
    const followed = [...new Set(importedSources(source, code))].filter(
      (target) => !included.has(target) && !done.has(target),
    );
    for (const target of followed) imported.add(target);
    const counts = await Promise.all(followed.map(compile));
    return counts.reduce((sum, count) => sum + count, stale ? 1 : 0);
  };
  const compiled = (await Promise.all([...included].map(compile))).reduce((sum, count) => sum + count, 0);
  if (failures.length > 0) {
    console.error(`The TypeScript did not compile:\n${failures.join('\n')}`);
    process.exit(1);
  }
  removeOrphans();
  copyBrowserAssets();
  mkdirSync(dist, { recursive: true });
  writeFileSync(stamp, `${JSON.stringify({ builtAt: startedAt.toISOString(), imported: [...imported].sort() })}\n`);
  utimesSync(stamp, startedAt, startedAt);
  return compiled;
}

requireNode();
const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/launch.mjs <entry, e.g. scripts/token> [arguments...] | --build');
  process.exit(2);
}
if (entry === '--build') {
  await build(true);
  process.exit(0);
}
const compiled = path.join(dist, `${entry}.js`);
const previous = lastBuild();
if (!previous) {
  console.error('First run: compiling the TypeScript into dist/ (swc, about a second)...');
  await build(true);
} else if (
  !existsSync(compiled) ||
  Math.max(newestSettingsTime(), scanSources(previous.imported).newest) > previous.startedAt
) {
  const started = performance.now();
  const count = await build(false);
  console.error(
    `Sources changed since the last build: compiled ${count} file${count === 1 ? '' : 's'} (swc, ${Math.round(performance.now() - started)} ms).`,
  );
}
// V8's compiled code for every module the entry loads is kept between runs (Node's compile cache, in the
// project's own dist/ rather than a shared temporary folder): a warm start spends about 0.3 s less
// compiling JavaScript. The workers of a cluster inherit it through the environment.
const compileCache = path.join(dist, '.compile-cache');
process.env.NODE_COMPILE_CACHE = compileCache;
module.enableCompileCache(compileCache);
// The entry reads its arguments from process.argv as if it had been started itself.
process.argv = [process.argv[0], compiled, ...args];
await import(pathToFileURL(compiled).href);
