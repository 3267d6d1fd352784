import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { IncomingMessage } from 'node:http';
import { ConfigError, loadConfig, type Config } from '#lib/config.js';
import { openDatabase, type Orm } from '#lib/data/database.js';
import { carriesSubgraphToken } from '#lib/http/subgraph-token.js';
import { createLogger } from '#lib/observability/logger.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { deriveKeys, masterKeys, signPayload, verifyPayload } from '#lib/secrets.js';
import { TokenCipher, UnopenableSealedValue } from '#subgraphs/social/integrations/token-cipher.js';
import { socialMigrations } from '#subgraphs/social/migrations/index.js';
import { webhookSettingsOf } from '#subgraphs/social/webhooks/webhook.delivery.js';
import { createTestDatabase, type TestDatabase } from '#test/support/platform.js';

const newKey = randomBytes(32).toString('base64');
const oldKey = randomBytes(32).toString('base64');
const lostKey = randomBytes(32).toString('base64');
const configWith = (keys: string, extra: Record<string, string> = {}) =>
  loadConfig({ DATA_DIR: os.tmpdir(), ENCRYPTION_KEY: keys, ...extra });
const request = (token?: string) => ({ headers: token ? { 'x-subgraph-token': token } : {} }) as IncomingMessage;

describe('rotating ENCRYPTION_KEY and SUBGRAPH_TOKEN without downtime', () => {
  it('takes comma lists, each item checked', () => {
    expect(masterKeys(configWith(`${newKey}, ${oldKey}`)).map((key) => key.toString('base64'))).toEqual([
      newKey,
      oldKey,
    ]);
    expect(() => configWith(`${newKey},not-a-key`)).toThrow(ConfigError);
    const tokens = loadConfig({ SUBGRAPH_TOKEN: 'the-new-shared-token, the-old-shared-token' }).env.SUBGRAPH_TOKEN;
    expect(tokens).toEqual(['the-new-shared-token', 'the-old-shared-token']);
    expect(() => loadConfig({ SUBGRAPH_TOKEN: 'the-new-shared-token,short' })).toThrow(/SUBGRAPH_TOKEN/);
    expect(loadConfig({}).env.SUBGRAPH_TOKEN).toEqual([]);
  });

  it('signs with the first key and verifies with any', () => {
    const before = deriveKeys(masterKeys(configWith(oldKey)), 'storage-urls');
    const during = deriveKeys(masterKeys(configWith(`${newKey},${oldKey}`)), 'storage-urls');
    const after = deriveKeys(masterKeys(configWith(newKey)), 'storage-urls');
    const issuedBefore = signPayload(before, { k: 'a' });
    expect(verifyPayload(during, issuedBefore)).toEqual({ k: 'a' });
    const issuedDuring = signPayload(during, { k: 'b' });
    expect(verifyPayload(after, issuedDuring)).toEqual({ k: 'b' });
    expect(verifyPayload(before, issuedDuring)).toBeNull();
  });

  it('seals with the first key, opens with any, and names the owner of a value no key opens', () => {
    const cipher = (keys: string) => TokenCipher.fromConfig(configWith(keys));
    const sealedBefore = cipher(oldKey).seal('token-1', 'integration:i1:access');
    expect(cipher(`${newKey},${oldKey}`).open(sealedBefore, 'integration:i1:access')).toBe('token-1');
    const open = () => cipher(newKey).open(sealedBefore, 'integration:i1:access', 'integration i1');
    expect(open).toThrow(UnopenableSealedValue);
    expect(open).toThrow(/integration i1 opens with none of the keys in ENCRYPTION_KEY/);
  });

  it('accepts a subgraph token from either list, and nothing else', () => {
    const tokens = ['the-new-shared-token', 'the-old-shared-token'];
    expect(carriesSubgraphToken(request('the-new-shared-token'), tokens)).toBe(true);
    expect(carriesSubgraphToken(request('the-old-shared-token'), tokens)).toBe(true);
    expect(carriesSubgraphToken(request('another-shared-token'), tokens)).toBe(false);
    expect(carriesSubgraphToken(request(), tokens)).toBe(false);
    expect(carriesSubgraphToken(request('the-old-shared-token'), [])).toBe(false);
  });
});

describe('npm run rekey', () => {
  let database: TestDatabase;
  let dataDir: string;
  let orm: Orm;
  const env = (keys: string): Record<string, string> => ({
    DATA_DIR: dataDir,
    ENCRYPTION_KEY: keys,
    LOG_LEVEL: 'error',
    ...(database.url ? { DATABASE_URL: database.url } : {}),
  });
  const configOf = (keys: string): Config => loadConfig(env(keys));
  const sql = (text: string, params: unknown[] = []) => orm.em.fork().getConnection().execute(text, params);
  const rekey = (keys: string) =>
    promisify(execFile)(process.execPath, [path.join(PROJECT_ROOT, 'dist', 'scripts', 'rekey.js')], {
      env: { PATH: process.env.PATH ?? '', ...env(keys) },
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
  const integration = randomUUID();
  const webhook = randomUUID();
  const lost = randomUUID();

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'rekey-test-'));
    const old = configOf(oldKey);
    orm = await openDatabase(old, createLogger(old), { service: 'social', migrations: socialMigrations, entities: [] });
    // Secrets as the previous key sealed them, and one sealed under a key nobody lists any more.
    const tokens = TokenCipher.fromConfig(old);
    const insertIntegration = (id: string, access: string, refresh: string | null) =>
      sql(
        `insert into social.integration (id, owner_id, platform, status, account_id, account_name, access_token_sealed, refresh_token_sealed)
         values (?, ?, 'mastodon', 'connected', 'acct', 'Account', ?, ?)`,
        [id, `owner-${id}`, access, refresh],
      );
    await insertIntegration(
      integration,
      tokens.seal('access-1', `integration:${integration}:access`),
      tokens.seal('refresh-1', `integration:${integration}:refresh`),
    );
    await insertIntegration(
      lost,
      TokenCipher.fromConfig(configOf(lostKey)).seal('x', `integration:${lost}:access`),
      null,
    );
    await sql(
      `insert into social.webhook (id, owner_id, url, events, secret_sealed) values (?, 'o', 'https://h.example', '{post.created}', ?)`,
      [webhook, webhookSettingsOf(old).cipher.seal('whsec_1', webhook)],
    );
    // On embedded PGlite the command needs DATA_DIR to itself.
    if (!database.url) await orm.close();
  });

  afterAll(async () => {
    if (database.url) await orm.close();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('seals every stored secret again with the first key, prints how many, and names what no key opens', async () => {
    const { code, stdout, stderr } = await rekey(`${newKey},${oldKey}`);
    expect(stdout).toContain('resealed 3 secrets with the first key of ENCRYPTION_KEY');
    // The one sealed under a dropped key: an error line naming it, and exit 1, never a crash.
    expect(code).toBe(1);
    expect(`${stdout}${stderr}`).toContain(`integration ${lost} opens with none of the keys`);
    if (!database.url) {
      const reopened = configOf(newKey);
      orm = await openDatabase(reopened, createLogger(reopened), {
        service: 'social',
        migrations: socialMigrations,
        entities: [],
      });
    }
    // The old key can go now: the new one alone opens everything that was moved.
    const only = configOf(newKey);
    const [row] = await sql('select access_token_sealed, refresh_token_sealed from social.integration where id = ?', [
      integration,
    ]);
    const tokens = TokenCipher.fromConfig(only);
    expect(tokens.open(row.access_token_sealed, `integration:${integration}:access`)).toBe('access-1');
    expect(tokens.open(row.refresh_token_sealed, `integration:${integration}:refresh`)).toBe('refresh-1');
    const [hook] = await sql('select secret_sealed from social.webhook where id = ?', [webhook]);
    expect(webhookSettingsOf(only).cipher.open(hook.secret_sealed, webhook)).toBe('whsec_1');
  });
});
