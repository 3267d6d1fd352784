import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { SignJWT } from 'jose';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '#lib/config.js';
import { Identity } from '#lib/identity.js';
import { createMailer } from '#lib/subgraph/mail.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { startJwksServer } from '#test/support/jwks.js';
import { LogCollector } from '#test/support/logs.js';
import { freePort } from '#test/support/ports.js';

/** What every instance of a part must share, set the way many instances share it. */
const SHARED = {
  DATABASE_URL: 'postgres://platform@db.example.internal:5432/platform',
  STORAGE_URL: 's3://platform',
  S3_ACCESS_KEY_ID: 'access',
  S3_SECRET_ACCESS_KEY: 'secret',
  REDIS_URL: 'redis://redis.example.internal:6379',
  ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
};

/** Every production decision made, the safe way. */
const DECIDED = {
  NODE_ENV: 'production',
  IDENTITY_JWKS_URL: 'https://id.example.com/jwks.json',
  IDENTITY_ISSUER: 'https://id.example.com/',
  IDENTITY_AUDIENCE: 'platform',
  SMTP_URL: 'smtp://mail.example.com:25',
  CONTACTS_AUTH: 'required',
  TRUST_PROXY: '1',
  ...SHARED,
};

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
};

/** A part of the platform as its container runs it (the built entry point), with only `env`. */
function runPart(part: string, env: Record<string, string>, until: (output: string) => boolean) {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'dist', 'scripts', 'part.js'), part], {
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`neither an exit nor the awaited output within 60 s:\n${output}`));
    }, 60_000);
    const check = () => {
      if (!until(output)) return;
      clearTimeout(timer);
      child.once('exit', (code) => resolve({ code, output }));
      child.kill('SIGTERM');
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('production refuses unsafe defaults', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'production-test-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('names every missing decision at once', () => {
    const problems = problemsOf({ NODE_ENV: 'production' });
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual([
      'CONTACTS_AUTH',
      'DATABASE_URL',
      'ENCRYPTION_KEY',
      'IDENTITY_JWKS_URL',
      'REDIS_URL',
      'SMTP_URL',
      'STORAGE_URL',
    ]);
    expect(problems.join('\n')).toContain('DEV_IDENTITY=allow');
    expect(problemsOf(DECIDED)).toEqual([]);
    // Development keeps its defaults.
    expect(problemsOf({})).toEqual([]);
  });

  it('takes each decision on its own: the development issuer only when allowed, with a warning', () => {
    const {
      IDENTITY_JWKS_URL: _url,
      IDENTITY_ISSUER: _issuer,
      IDENTITY_AUDIENCE: _audience,
      ...withoutIdentity
    } = DECIDED;
    expect(problemsOf(withoutIdentity).map((problem) => problem.split(':')[0])).toEqual(['IDENTITY_JWKS_URL']);
    const allowed = loadConfig({ ...withoutIdentity, DEV_IDENTITY: 'allow', SINGLE_INSTANCE: 'true' });
    expect(allowed.warnings.join('\n')).toMatch(
      /DEV_IDENTITY=allow: production is using the embedded development issuer/,
    );
    expect(loadConfig(DECIDED).warnings).toEqual([]);
    expect(problemsOf({ ...withoutIdentity, DEV_IDENTITY: 'yes' }).join('\n')).toContain('DEV_IDENTITY');
    // Empty (as compose writes `${DEV_IDENTITY:-}`) is unset.
    expect(problemsOf({ ...withoutIdentity, DEV_IDENTITY: '' }).map((problem) => problem.split(':')[0])).toEqual([
      'IDENTITY_JWKS_URL',
    ]);
    const { SMTP_URL: _smtp, ...withoutSmtp } = DECIDED;
    expect(problemsOf(withoutSmtp).map((problem) => problem.split(':')[0])).toEqual(['SMTP_URL']);
    const { CONTACTS_AUTH: _contacts, ...withoutContacts } = DECIDED;
    expect(problemsOf(withoutContacts).map((problem) => problem.split(':')[0])).toEqual(['CONTACTS_AUTH']);
    expect(problemsOf({ ...DECIDED, CONTACTS_AUTH: 'open' })).toEqual([]);
  });

  it('warns while TRUST_PROXY is unset: behind a proxy every client would count as one', () => {
    const { TRUST_PROXY: _trustProxy, ...withoutTrustProxy } = DECIDED;
    const [warning, ...others] = loadConfig(withoutTrustProxy).warnings;
    expect(others).toEqual([]);
    expect(warning).toMatch(/^TRUST_PROXY is unset: /);
    expect(warning).toMatch(/sign-in/);
    // A decision either way quiets it: the proxies in front, or 0 for clients that connect directly.
    expect(loadConfig({ ...DECIDED, TRUST_PROXY: '0' }).warnings).toEqual([]);
    expect(loadConfig({ ...DECIDED, TRUST_PROXY: '10.0.0.0/8' }).warnings).toEqual([]);
    // Development proxies nothing and hears nothing.
    expect(loadConfig({}).warnings).toEqual([]);
  });

  it('wants a shared subgraph token once subgraphs listen beyond loopback', () => {
    expect(loadConfig({}).env.SUBGRAPH_HOST).toBe('127.0.0.1');
    expect(problemsOf({ ...DECIDED, SUBGRAPH_HOST: '0.0.0.0' }).map((problem) => problem.split(':')[0])).toEqual([
      'SUBGRAPH_TOKEN',
    ]);
    expect(problemsOf({ ...DECIDED, SUBGRAPH_HOST: '0.0.0.0', SUBGRAPH_TOKEN: 'a-long-shared-secret-value' })).toEqual(
      [],
    );
    expect(problemsOf({ ...DECIDED, SUBGRAPH_HOST: '::1' })).toEqual([]);
    expect(problemsOf({ SUBGRAPH_TOKEN: 'short' }).join('\n')).toContain('SUBGRAPH_TOKEN');
  });

  it('exits 1 naming every missing decision when a part starts in production', async () => {
    const { code, output } = await runPart('gateway', { NODE_ENV: 'production', DATA_DIR: dataDir }, () => false);
    expect(code).toBe(1);
    for (const name of [
      'IDENTITY_JWKS_URL',
      'DEV_IDENTITY=allow',
      'SMTP_URL',
      'CONTACTS_AUTH',
      'DATABASE_URL',
      'STORAGE_URL',
      'REDIS_URL',
      'ENCRYPTION_KEY',
      'SINGLE_INSTANCE=true',
    ])
      expect(output).toContain(name);
  });

  it('refuses every setting that keeps state per process, naming each, unless SINGLE_INSTANCE=true', () => {
    const names = (env: Record<string, string>) => problemsOf(env).map((problem) => problem.split(':')[0]);
    const { DATABASE_URL: _database, ...embedded } = DECIDED;
    expect(names(embedded)).toEqual(['DATABASE_URL']);
    const { STORAGE_URL: _storage, ...localFiles } = DECIDED;
    expect(names(localFiles)).toEqual(['STORAGE_URL']);
    expect(names({ ...DECIDED, STORAGE_URL: 'file:///data/storage' })).toEqual(['STORAGE_URL']);
    const { REDIS_URL: _redis, ...perProcessLimits } = DECIDED;
    expect(names(perProcessLimits)).toEqual(['REDIS_URL']);
    const { ENCRYPTION_KEY: _key, ...ownKey } = DECIDED;
    expect(names(ownKey)).toEqual(['ENCRYPTION_KEY']);
    const { IDENTITY_JWKS_URL: _url, IDENTITY_ISSUER: _issuer, IDENTITY_AUDIENCE: _audience, ...devIssuer } = DECIDED;
    expect(names({ ...devIssuer, DEV_IDENTITY: 'allow' })).toEqual(['DEV_IDENTITY=allow']);
    // Every refusal says how to declare a single instance instead.
    for (const problem of problemsOf(embedded)) expect(problem).toContain('SINGLE_INSTANCE=true');

    // One instance declared: it starts, and each of them is a warning naming it.
    const single = {
      NODE_ENV: 'production',
      DEV_IDENTITY: 'allow',
      SMTP_URL: 'smtp://mail.example.com:25',
      CONTACTS_AUTH: 'required',
      TRUST_PROXY: '1',
      SINGLE_INSTANCE: 'true',
    };
    const warnings = loadConfig(single).warnings.filter((warning) => warning.startsWith('SINGLE_INSTANCE=true: '));
    expect(warnings.map((warning) => warning.split(': ')[1].split(':')[0])).toEqual([
      'DATABASE_URL',
      'STORAGE_URL',
      'REDIS_URL',
      'ENCRYPTION_KEY',
      'DEV_IDENTITY=allow',
    ]);
    // Shared settings leave nothing to warn about; false is as good as unset.
    expect(loadConfig({ ...DECIDED, SINGLE_INSTANCE: 'true' }).warnings).toEqual([]);
    expect(names({ ...embedded, SINGLE_INSTANCE: 'false' })).toEqual(['DATABASE_URL']);
  });

  it('warns at every start of a part: the development issuer production lets it use, and TRUST_PROXY unset', async () => {
    const env = {
      NODE_ENV: 'production',
      DEV_IDENTITY: 'allow',
      SMTP_URL: 'smtp://127.0.0.1:2525',
      CONTACTS_AUTH: 'open',
      SINGLE_INSTANCE: 'true',
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      GATEWAY_PORT: String(await freePort()),
    };
    const { output } = await runPart('gateway', env, (text) => text.includes('gateway listening on'));
    const lines = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(lines.find((line) => line.msg.startsWith('DEV_IDENTITY=allow'))?.level).toBe(40);
    // TRUST_PROXY is not set here either: the part says what that means for its per-client limits.
    expect(lines.find((line) => line.msg.startsWith('TRUST_PROXY is unset'))?.level).toBe(40);
    // One instance declared: the state it keeps to itself is named at every start.
    for (const name of ['DATABASE_URL', 'STORAGE_URL', 'REDIS_URL', 'ENCRYPTION_KEY', 'DEV_IDENTITY=allow'])
      expect(lines.find((line) => line.msg.startsWith(`SINGLE_INSTANCE=true: ${name}`))?.level).toBe(40);
  });

  it('never writes a sign-in mail to the log in production, and marks it as development-only elsewhere', async () => {
    const sink = new LogCollector();
    const developmentConfig = loadConfig({});
    expect(() => createMailer({ ...developmentConfig, isProduction: true }, pino(sink))).toThrow(
      /SMTP_URL is required in production/,
    );
    const mailer = createMailer(developmentConfig, pino({ level: 'trace' }, sink));
    await mailer.send({
      from: 'a@b.example',
      to: 'c@d.example',
      subject: 'Sign in',
      text: 'https://app.example/auth/magic?token=abc',
    });
    const line = sink.lines[0] as { level: number; developmentOnly: string; text: string };
    expect(line.level).toBe(40);
    expect(line.developmentOnly).toMatch(/for development only/);
  });
});

describe('bearer tokens', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'token-age-test-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('need an expiry, and are refused once older than IDENTITY_MAX_TOKEN_AGE_SECONDS or issued in the future', async () => {
    const jwks = await startJwksServer('ES256');
    const { privateKey } = jwks;
    try {
      const identity = await Identity.create(
        loadConfig({
          DATA_DIR: dataDir,
          IDENTITY_JWKS_URL: jwks.url,
          IDENTITY_ISSUER: 'https://id.example',
          IDENTITY_AUDIENCE: 'platform',
          IDENTITY_MAX_TOKEN_AGE_SECONDS: '3600',
        }),
      );
      const now = Math.floor(Date.now() / 1000);
      const token = (claims: { iat?: number; exp?: number }) => {
        const jwt = new SignJWT({})
          .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
          .setSubject('u1')
          .setIssuer('https://id.example')
          .setAudience('platform');
        if (claims.iat !== undefined) jwt.setIssuedAt(claims.iat);
        if (claims.exp !== undefined) jwt.setExpirationTime(claims.exp);
        return jwt.sign(privateKey);
      };
      expect(await identity.verify(await token({ iat: now - 60, exp: now + 600 }))).toMatchObject({ userId: 'u1' });
      expect(await identity.verify(await token({ exp: now + 600 }))).toMatchObject({ userId: 'u1' });
      // No expiry at all.
      await expect(identity.verify(await token({ iat: now }))).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
      // Issued two hours ago and valid for a year: older than the maximum age.
      await expect(identity.verify(await token({ iat: now - 7200, exp: now + 365 * 86400 }))).rejects.toMatchObject({
        code: 'UNAUTHENTICATED',
      });
      // No issue time, and valid far longer than the maximum age.
      await expect(identity.verify(await token({ exp: now + 30 * 86400 }))).rejects.toMatchObject({
        code: 'UNAUTHENTICATED',
      });
      // Issued a day in the future: its age would only start counting tomorrow.
      await expect(identity.verify(await token({ iat: now + 86400, exp: now + 86400 + 600 }))).rejects.toMatchObject({
        code: 'UNAUTHENTICATED',
      });
      // A few seconds ahead is a fast clock at the issuer, within the tolerance.
      expect(await identity.verify(await token({ iat: now + 5, exp: now + 600 }))).toMatchObject({ userId: 'u1' });
    } finally {
      jwks.close();
    }
  });
});
