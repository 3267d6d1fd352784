// The npm registry reachable from this workplace serves only this machine's platform binaries, so
// `npm install` writes a package-lock.json without the other platforms' optional packages (for
// @swc/core, unrs-resolver, ...), and `npm ci` then refuses that lock as out of sync. This adds
// the missing optional entries with the os/cpu their names declare, which is what a lock written
// with the full registry holds; npm ci skips them on any other platform. Run after `npm install`.
// The lock is written exactly as npm writes it (its own serializer, json-stringify-nice, with npm's
// key order), so the next `npm install` finds nothing to reorder and leaves `git status` clean.
import { readFileSync, writeFileSync } from 'node:fs';
import stringify from 'json-stringify-nice';

/** npm's key order for a lockfile (`swKeyOrder` in @npmcli/arborist); other keys follow in English locale order. */
const NPM_LOCK_KEY_ORDER = [
  'name',
  'version',
  'lockfileVersion',
  'resolved',
  'integrity',
  'requires',
  'packages',
  'dependencies',
];

const file = process.argv[2] ?? new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;
const OS = [
  'darwin',
  'linux',
  'win32',
  'android',
  'freebsd',
  'openharmony',
  'sunos',
  'aix',
  'netbsd',
  'openbsd',
  'wasm32',
];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'wasm32'];

let added = 0;
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const parentDir = location ? `${location}/node_modules/${name}` : `node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (packages[parentDir] || packages[hoisted]) continue;
    const parts = name.split('/').pop().split('-');
    const os = parts.find((part) => OS.includes(part));
    const cpu = parts.find((part) => CPU.includes(part));
    if (!os && !cpu) continue;
    packages[hoisted] = {
      version: String(version).replace(/^[\^~=]/, ''),
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      ...(os ? { os: [os === 'wasm32' ? 'wasm32' : os] } : {}),
      ...(cpu ? { cpu: [cpu] } : {}),
    };
    added += 1;
  }
}
writeFileSync(file, stringify(lock, NPM_LOCK_KEY_ORDER, 2));
console.log(`${process.argv[2] ?? 'package-lock.json'}: added ${added} optional platform entries`);
