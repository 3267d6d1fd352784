import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '#lib/paths.js';
import { platformPorts } from '#test/support/ports.js';

const FIRST_BUILD = 'First run: compiling the TypeScript into dist/ (swc';
const COMPILING = 'Sources changed since the last build: compiled';
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

  it('compiles on the first run, saying so, then runs the entry with its arguments', () => {
    const first = run(project, ['scripts/launch.mjs', 'scripts/hello', 'a', '--b']);
    expect(first.stderr).toContain(FIRST_BUILD);
    expect(first.stderr).not.toContain('Sources changed');
    expect(first.status).toBe(0);
    expect(first.stdout.trim()).toBe('["a","--b"]');
    // Source maps as tsc wrote them: a map beside each file, naming its source relative to it.
    expect(readFileSync(path.join(project, 'dist', 'scripts', 'hello.js'), 'utf8')).toContain(
      '//# sourceMappingURL=hello.js.map',
    );
    const map = JSON.parse(readFileSync(path.join(project, 'dist', 'scripts', 'hello.js.map'), 'utf8')) as {
      sources: string[];
    };
    expect(map.sources).toEqual(['../../scripts/hello.ts']);
  });

  it("keeps V8's compiled code of the modules it ran in dist/, for the next run", () => {
    const cache = path.join(project, 'dist', '.compile-cache');
    expect(readdirSync(cache, { recursive: true }).length).toBeGreaterThan(0);
  });

  it('does not compile again while no source changed', () => {
    const again = run(project, ['scripts/launch.mjs', 'scripts/hello', 'c']);
    expect(again.stderr).not.toContain(COMPILING);
    expect(again.stdout.trim()).toBe('["c"]');
  });

  it('compiles again only the sources that changed or were added, and drops the output of a deleted one', () => {
    writeFileSync(path.join(project, 'scripts', 'other.ts'), 'export const other = 1;\n');
    touch(path.join(project, 'scripts'));
    expect(run(project, ['scripts/launch.mjs', 'scripts/hello']).stderr).toContain(`${COMPILING} 1 file (swc`);
    expect(existsSync(path.join(project, 'dist', 'scripts', 'other.js'))).toBe(true);
    expect(run(project, ['scripts/launch.mjs', 'scripts/hello']).stderr).not.toContain(COMPILING);

    writeFileSync(source(), 'import { other } from "./other.js";\nconsole.log(JSON.stringify({ other }));\n');
    touch(source());
    const changed = run(project, ['scripts/launch.mjs', 'scripts/hello']);
    expect(changed.stderr).toContain(`${COMPILING} 1 file (swc`);
    expect(changed.stdout.trim()).toBe('{"other":1}');

    writeFileSync(source(), 'console.log(JSON.stringify(process.argv.slice(2)));\n');
    touch(source());
    rmSync(path.join(project, 'scripts', 'other.ts'));
    touch(path.join(project, 'scripts'));
    expect(run(project, ['scripts/launch.mjs', 'scripts/hello']).stderr).toContain(`${COMPILING} 1 file (swc`);
    expect(existsSync(path.join(project, 'dist', 'scripts', 'other.js'))).toBe(false);
    expect(existsSync(path.join(project, 'dist', 'scripts', 'other.js.map'))).toBe(false);
  });

  it('copies the browser files production serves from development dependencies into dist/, and keeps them', () => {
    // The builds above dropped every output without a source: these have none, and stay.
    const copy = path.join(project, 'dist', 'browser-assets', 'swagger-ui-dist');
    const installed = path.join(PROJECT_ROOT, 'node_modules', 'swagger-ui-dist');
    expect(readdirSync(copy).sort()).toEqual(['package.json', 'swagger-ui-bundle.js', 'swagger-ui.css']);
    for (const file of readdirSync(copy))
      expect(readFileSync(path.join(copy, file)).equals(readFileSync(path.join(installed, file)))).toBe(true);
  });

  it('compiles a source outside the included folders that an included one imports, and watches it', () => {
    mkdirSync(path.join(project, 'support'));
    const helper = path.join(project, 'support', 'helper.ts');
    writeFileSync(helper, 'export const helper = "first";\n');
    writeFileSync(source(), 'import { helper } from "../support/helper.js";\nconsole.log(helper);\n');
    touch(source());
    expect(run(project, ['scripts/launch.mjs', 'scripts/hello']).stdout.trim()).toBe('first');

    // Watched after any number of builds, not only the one that found it.
    for (const value of ['second', 'third']) {
      writeFileSync(helper, `export const helper = "${value}";\n`);
      touch(helper);
      const again = run(project, ['scripts/launch.mjs', 'scripts/hello']);
      expect(again.stderr).toContain(`${COMPILING} 1 file (swc`);
      expect(again.stdout.trim()).toBe(value);
    }
  });

  it('emits the legacy decorators and the metadata type-graphql and MikroORM read', () => {
    writeFileSync(
      source(),
      [
        'import "reflect-metadata";',
        'const Field = (): PropertyDecorator => () => undefined;',
        'class Contact {',
        '  @Field() name!: string;',
        '  @Field() born?: Date;',
        '}',
        'const type = (key: string) => (Reflect.getMetadata("design:type", Contact.prototype, key) as Function).name;',
        'console.log(type("name"), type("born"));',
      ].join('\n'),
    );
    touch(source());
    const decorated = run(project, ['scripts/launch.mjs', 'scripts/hello']);
    expect(decorated.stderr).toContain(COMPILING);
    expect(decorated.stdout.trim()).toBe('String Date');
  });

  it('compiles everything again when the compiler settings change', () => {
    writeFileSync(path.join(project, 'scripts', 'other.ts'), 'export const other = 1;\n');
    expect(run(project, ['scripts/launch.mjs', 'scripts/hello']).stderr).toContain(`${COMPILING} 1 file (swc`);
    touch(path.join(project, 'tsconfig.json'));
    expect(run(project, ['scripts/launch.mjs', 'scripts/hello']).stderr).toContain(`${COMPILING} 2 files (swc`);
  });

  it('leaves type errors to tsc (npm test, npm run typecheck): a type error still runs', () => {
    writeFileSync(
      source(),
      'const count: number = "text" as unknown as number;\nconst wrong: string = 1 as never;\nconsole.log(count, wrong);\n',
    );
    touch(source());
    expect(run(project, ['scripts/launch.mjs', 'scripts/hello']).stdout.trim()).toBe('text 1');
  });

  it('stops on a syntax error, naming the file, runs nothing, and tries again next time', () => {
    writeFileSync(source(), 'const broken = ;\nconsole.log("ran");\n');
    touch(source());
    const failed = run(project, ['scripts/launch.mjs', 'scripts/hello']);
    expect(failed.status).not.toBe(0);
    expect(failed.stderr).toContain('The TypeScript did not compile');
    expect(failed.stderr).toContain(path.join('scripts', 'hello.ts'));
    expect(failed.stdout).not.toContain('ran\n');
    writeFileSync(source(), 'console.log("fixed");\n');
    const fixed = run(project, ['scripts/launch.mjs', 'scripts/hello']);
    expect(fixed.stderr).toContain(COMPILING);
    expect(fixed.stdout.trim()).toBe('fixed');
  });

  it('refuses a Node older than package.json asks for, naming the version needed', () => {
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ type: 'module', engines: { node: '>=99' } }));
    const refused = run(project, ['scripts/launch.mjs', 'scripts/hello']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('This project needs Node 99 or newer');
    expect(refused.stderr).toContain(`this is Node ${process.versions.node}`);
  });
});

describe('npm start on a fresh checkout (nothing compiled, no data)', () => {
  /** What a clone does not have: what the install, a build and a start make. */
  const NOT_IN_A_CLONE = new Set(['node_modules', 'dist', '.data', '.git', '.tools', 'coverage']);
  let checkout: string;
  let dataDir: string;
  beforeAll(() => {
    checkout = mkdtempSync(path.join(os.tmpdir(), 'launch-checkout-'));
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'launch-data-'));
    for (const entry of readdirSync(PROJECT_ROOT).filter((name) => !NOT_IN_A_CLONE.has(name)))
      cpSync(path.join(PROJECT_ROOT, entry), path.join(checkout, entry), { recursive: true });
    symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(checkout, 'node_modules'), 'dir');
  });
  afterAll(() => {
    rmSync(checkout, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('says what it does first, compiles with swc, and the platform built from it serves (its decorators work)', async () => {
    const env = await platformPorts();
    const child = spawn(process.execPath, ['scripts/launch.mjs', 'scripts/start'], {
      cwd: checkout,
      env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), DATA_DIR: dataDir, METRICS_PORT: '0', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await Promise.race([
        (async () => {
          while (!stdout.includes('Platform running')) await new Promise((resolve) => setTimeout(resolve, 100));
        })(),
        exited.then((code) => {
          throw new Error(`npm start exited with ${code}:\n${stdout}\n${stderr}`);
        }),
      ]);
      expect(stderr.split('\n')[0]).toContain(FIRST_BUILD);
      for (const service of ['social', 'surveys', 'contacts'])
        expect(stdout).toMatch(new RegExp(`"component":"${service}-db".*"msg":"creating the embedded database`));
      expect(existsSync(path.join(checkout, 'dist', 'scripts', 'start.js'))).toBe(true);
      // The subgraphs' schemas come from type-graphql's decorators and their entities from MikroORM's:
      // the gateway composed all three, and each answers through its database.
      for (const port of Object.values(env)) expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      const answer = await fetch(`http://127.0.0.1:${env.GATEWAY_PORT}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'apollo-require-preflight': 'true' },
        body: JSON.stringify({ query: '{ __type(name: "Query") { fields { name } } }' }),
      });
      const body = (await answer.json()) as { data?: { __type: { fields: { name: string }[] } } };
      expect(body.data?.__type.fields.length).toBeGreaterThan(3);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 300_000);
});

describe('every npm script', () => {
  const launched = Object.entries(packageJson.scripts)
    .map(
      ([name, command]) => [name, /^(?:exec )?node (?:--\S+ )*scripts\/launch\.mjs (\S+)$/.exec(command)?.[1]] as const,
    )
    .filter((entry): entry is readonly [string, string] => entry[1] !== undefined && entry[1] !== '--build');

  it('builds only when sources changed: each runs through the launcher', () => {
    for (const name of ['start', 'token', 'apikey', 'worker', 'migrate', 'schema', 'bench:contacts', 'bench:social']) {
      expect({ name, launched: launched.some(([script]) => script === name) }).toEqual({ name, launched: true });
    }
  });

  it("runs the long-lived processes with the image's V8 settings (the heap's caps, docs/performance.md)", () => {
    const image = /^ENV NODE_OPTIONS="(.+)"$/m.exec(readFileSync(path.join(PROJECT_ROOT, 'Dockerfile'), 'utf8'))?.[1];
    expect(image).toMatch(/--max-semi-space-size=\d+ --max-old-space-size=\d+/);
    for (const name of ['start', 'worker'])
      expect({ name, command: packageJson.scripts[name] }).toEqual({
        name,
        command: `exec node ${image} scripts/launch.mjs scripts/${name}`,
      });
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
