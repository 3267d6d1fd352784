import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { ConfigError, loadConfig, type Config } from '#lib/config.js';
import { openDatabase } from '#lib/data/database.js';
import { AppError } from '#lib/errors.js';
import { Identity } from '#lib/identity.js';
import { createLogger } from '#lib/observability/logger.js';
import { ApiKeyService } from '#subgraphs/social/access/api-key.service.js';
import { Reach } from '#subgraphs/social/access/reach.js';
import { socialMigrations } from '#subgraphs/social/migrations/index.js';
import { socialEntities } from '#subgraphs/social/social.entities.js';

const USAGE = `usage:
  npm run apikey -- create --sub USER_ID --scopes posts.read,posts.write [--name NAME] [--brands BRAND_ID,...]
  npm run apikey -- list --sub USER_ID
  npm run apikey -- revoke --sub USER_ID --id KEY_ID

Scopes may also carry the brand reach: brand:* (the default) or brand:<id>.
When the platform is running (GATEWAY_URL, or the gateway on GATEWAY_PORT), the key is made through its
GraphQL API as that user; otherwise the social database is opened directly.`;

exitWithHelpIfAsked(USAGE);

const API_KEY_FIELDS = 'id name prefix scopes brandIds lastUsedAt revokedAt';

interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  brandIds: string[] | null;
  lastUsedAt: string | Date | null;
  revokedAt: string | Date | null;
}

/** What the three operations below answer, each under its own field. */
interface ApiKeyAnswers {
  createApiKey: { key: string; apiKey: ApiKeyView };
  apiKeys: ApiKeyView[];
  revokeApiKey: ApiKeyView;
}

type Command =
  | { command: 'create'; name: string; scopes: string[]; brandIds: string[] }
  | { command: 'list' }
  | { command: 'revoke'; id: string };

/**
 * Runs the command through a running gateway as the user (a development-issuer token), so it
 * works while `npm start` holds the embedded database. Null when no gateway answers.
 */
async function throughGateway(
  config: Config,
  sub: string,
  command: Command,
): Promise<{ key?: string; keys: ApiKeyView[] } | null> {
  const url = config.env.GATEWAY_URL ?? `http://127.0.0.1:${config.ports.gateway}/graphql`;
  const identity = await Identity.create(config);
  if (!identity.canSign) return null;
  const [query, variables] =
    command.command === 'create'
      ? [
          `mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { key apiKey { ${API_KEY_FIELDS} } } }`,
          { input: { name: command.name, scopes: command.scopes, brandIds: command.brandIds } },
        ]
      : command.command === 'list'
        ? [`{ apiKeys { ${API_KEY_FIELDS} } }`, {}]
        : [`mutation ($id: ID!) { revokeApiKey(id: $id) { ${API_KEY_FIELDS} } }`, { id: command.id }];
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await identity.sign({ sub }, '5m')}` },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(10_000),
    });
  } catch {
    return null;
  }
  const body = (await response.json()) as { data?: ApiKeyAnswers; errors?: { message: string }[] };
  if (body.errors?.length) throw new Error(body.errors.map((error) => error.message).join('; '));
  const data = body.data!;
  if (command.command === 'create') return { key: data.createApiKey.key, keys: [data.createApiKey.apiKey] };
  return { keys: command.command === 'list' ? data.apiKeys : [data.revokeApiKey] };
}

/** Opens the social database in this process (the platform is not running). */
async function directly(config: Config, sub: string, command: Command): Promise<{ key?: string; keys: ApiKeyView[] }> {
  const logger = createLogger({ ...config, env: { ...config.env, LOG_LEVEL: 'warn' } }, process.stderr);
  const orm = await openDatabase(config, logger, {
    service: 'social',
    entities: socialEntities,
    migrations: socialMigrations,
  });
  try {
    // The operator acts as the user with a full-scope bearer credential, as `npm run token` would give.
    const keys = new ApiKeyService(orm.em.fork(), Reach.of({ userId: sub, scopes: null, via: 'bearer' }));
    if (command.command === 'create') {
      const { key, apiKey } = await keys.create({
        name: command.name,
        scopes: command.scopes,
        brandIds: command.brandIds,
      });
      return { key, keys: [apiKey] };
    }
    if (command.command === 'list') return { keys: await keys.list() };
    return { keys: [await keys.revoke(command.id)] };
  } finally {
    await orm.close();
  }
}

/** `npm run apikey`: makes, lists and revokes API keys from a shell, as the GraphQL mutations do for a signed-in user. */
async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      sub: { type: 'string' },
      scopes: { type: 'string' },
      name: { type: 'string' },
      brands: { type: 'string' },
      id: { type: 'string' },
    },
  });
  const command = positionals[0];
  if (!['create', 'list', 'revoke'].includes(command ?? '')) {
    console.error(USAGE);
    process.exit(2);
  }
  if (!values.sub) {
    // Keys are made, listed and revoked as their owner: the same rules as the GraphQL mutations.
    console.error(`apikey ${command} needs --sub USER_ID, the user who owns the keys\n\n${USAGE}`);
    process.exit(2);
  }
  const config = loadConfig();
  const list = (text: string | undefined) =>
    (text ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  let request: Command;
  if (command === 'create')
    request = {
      command,
      name: values.name ?? `cli ${new Date().toISOString()}`,
      scopes: list(values.scopes),
      brandIds: list(values.brands),
    };
  else if (command === 'list') request = { command };
  else {
    if (!values.id) throw AppError.badInput('id', 'is required');
    request = { command: 'revoke', id: values.id };
  }
  const result = (await throughGateway(config, values.sub, request)) ?? (await directly(config, values.sub, request));
  const brands = (apiKey: ApiKeyView) => apiKey.brandIds?.join(',') ?? 'brand:*';
  if (request.command === 'create') {
    const apiKey = result.keys[0];
    console.error(
      `API key ${apiKey.id} (${apiKey.name}) for ${values.sub}: scopes ${apiKey.scopes.join(',')}; brands ${brands(apiKey)}`,
    );
    console.error('Store the key now; it is not shown again. Send it as the X-API-Key header.');
    process.stdout.write(`${result.key}\n`);
  } else if (request.command === 'list') {
    for (const apiKey of result.keys) {
      const state = apiKey.revokedAt
        ? `revoked ${new Date(apiKey.revokedAt).toISOString()}`
        : `last used ${apiKey.lastUsedAt ? new Date(apiKey.lastUsedAt).toISOString() : 'never'}`;
      console.log(
        `${apiKey.id}  ${apiKey.prefix}…  ${apiKey.name}  [${apiKey.scopes.join(',')}]  ${brands(apiKey)}  ${state}`,
      );
    }
  } else {
    console.log(`revoked ${result.keys[0].id}`);
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
