import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '../../lib/paths.js';

const COMPILING = 'Sources changed since the last build: compiling (tsc)';
const packageJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

function run(cwd: string, args: string[]) {
  const result = spawnSync(process.execPath, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('scripts/launch.mjs (what every npm script runs through)', () => {
  // A project of its own, with the launcher and one entry point, so that its builds take a second.
  let project: string;
  const source = () => path.join(project, 'scripts', 'hello.ts');
  /** Marks a file changed now: after the last build started. */
  const touch = (file: string) => utimesSync(file, new Date(), new Date());

  beforeAll(() => {
    project = mkdtempSync(path.join(os.tmpdir(), 'launch-'));
    mkdirSync(path.join(project, 'scripts'));
    copyFileSync(path.join(PROJECT_ROOT, 'scripts', 'launch.mjs'), path.join(project, 'scripts', 'launch.mjs'));
    symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(project, 'node_modules'));
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ type: 'module', engines: { node: '>=24' } }));
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2023',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          outDir: 'dist',
          rootDir: '.',
          types: ['node'],
        },
        include: ['scripts'],
      }),
    );
    writeFileSync(path.join(project, 'tsconfig.build.json'), JSON.stringify({ extends: './tsconfig.json' }));
    writeFileSync(source(), 'console.log(JSON.stringify(process.argv.slice(2)));\n');
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it('compiles on the first run, then runs the entry with its arguments', () => {
    const first = run(project, ['scripts/launch.mjs', 'scripts/hello', 'a', '--b']);
    expect(first.stderr).toContain(COMPILING);
    expect(first.status).toBe(0);
    expect(first.stdout.trim()).toBe('["a","--b"]');
  });

  it('does not compile again while no source changed', () => {
    const again = run(project, ['scripts/launch.mjs', 'scripts/hello', 'c']);
    expect(again.stderr).not.toContain(COMPILING);
    expect(again.stdout.trim()).toBe('["c"]');
  });

  it('compiles again after a source changed, was added or was deleted', () => {
    touch(source());
    expect(run(project, ['scripts/launch.mjs', 'scripts/hello']).stderr).toContain(COMPILING);
    expect(run(project, ['scripts/launch.mjs', 'scripts/hello']).stderr).not.toContain(COMPILING);

    writeFileSync(path.join(project, 'scripts', 'other.ts'), 'export const other = 1;\n');
    touch(path.join(project, 'scripts'));
    expect(run(project, ['scripts/launch.mjs', 'scripts/hello']).stderr).toContain(COMPILING);
    expect(existsSync(path.join(project, 'dist', 'scripts', 'other.js'))).toBe(true);
  });

  it('stops on a compile error, runs nothing, and tries again next time', () => {
    writeFileSync(source(), 'const broken: number = "text";\nconsole.log("ran");\n');
    touch(source());
    const failed = run(project, ['scripts/launch.mjs', 'scripts/hello']);
    expect(failed.status).not.toBe(0);
    expect(failed.stdout).toContain('error TS2322');
    expect(failed.stdout).not.toContain('ran\n');
    expect(run(project, ['scripts/launch.mjs', 'scripts/hello']).stderr).toContain(COMPILING);
  });

  it('refuses a Node older than package.json asks for, naming the version needed', () => {
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ type: 'module', engines: { node: '>=99' } }));
    const refused = run(project, ['scripts/launch.mjs', 'scripts/hello']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('This project needs Node 99 or newer');
    expect(refused.stderr).toContain(`this is Node ${process.versions.node}`);
  });
});

describe('every npm script', () => {
  const launched = Object.entries(packageJson.scripts)
    .map(([name, command]) => [name, /^(?:exec )?node scripts\/launch\.mjs (\S+)$/.exec(command)?.[1]] as const)
    .filter((entry): entry is readonly [string, string] => entry[1] !== undefined && entry[1] !== '--build');

  it('builds only when sources changed: each runs through the launcher', () => {
    for (const name of ['start', 'token', 'apikey', 'worker', 'migrate', 'schema', 'bench:contacts', 'bench:social']) {
      expect({ name, launched: launched.some(([script]) => script === name) }).toEqual({ name, launched: true });
    }
  });

  it('answers --help with its usage and exit code 0, touching nothing', () => {
    const entries = [...launched.map(([, entry]) => entry), 'scripts/part'];
    for (const entry of entries) {
      const help = run(PROJECT_ROOT, [path.join('dist', `${entry}.js`), '--help']);
      expect({ entry, status: help.status, usage: help.stdout.startsWith('usage:') }).toEqual({
        entry,
        status: 0,
        usage: true,
      });
    }
  });

  it('apikey says what it needs when --sub is missing (a key is revoked by its owner)', () => {
    const revoke = run(PROJECT_ROOT, [path.join('dist', 'scripts', 'apikey.js'), 'revoke', '--id', 'some-key']);
    expect(revoke.status).toBe(2);
    expect(revoke.stderr).toContain('apikey revoke needs --sub USER_ID');
  });
});
