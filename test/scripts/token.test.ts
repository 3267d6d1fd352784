import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '#lib/config.js';
import { hasScope, Identity } from '#lib/identity.js';
import { PROJECT_ROOT } from '#lib/paths.js';

describe('npm run token', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'token-test-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  /** The script as `npm run token` runs it (built first when a source changed). */
  const token = (...args: string[]) =>
    spawnSync(process.execPath, ['scripts/launch.mjs', 'scripts/token', ...args], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '', DATA_DIR: dataDir },
    });

  it('mints the surveys scopes with the email that names the surveyor', async () => {
    const minted = token(
      '--sub',
      'u1',
      '--scopes',
      'surveys.read,surveys.write,contacts.read',
      '--email',
      'a@x.example',
    );
    expect(minted.stderr).not.toMatch(/unknown scope/);
    expect(minted.status).toBe(0);
    const principal = await (await Identity.create(loadConfig({ DATA_DIR: dataDir }))).verify(minted.stdout.trim());
    expect(principal.email).toBe('a@x.example');
    expect([...principal.scopes!].sort()).toEqual(['contacts.read', 'surveys.read', 'surveys.write']);
    expect(hasScope(principal, 'posts.read')).toBe(false);
  });

  it('refuses a scope no service knows, naming it, and prints no token', () => {
    const refused = token('--sub', 'u1', '--scopes', 'posts.read,surveys.raed');
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/unknown scope: surveys\.raed;/);
    expect(refused.stdout).toBe('');
  });

  it('lists every scope in its help', () => {
    const help = token('--help');
    expect(help.status).toBe(0);
    for (const scope of ['posts.write', 'contacts.export', 'surveys.read', 'surveys.write']) {
      expect(help.stdout).toContain(scope);
    }
  });
});
