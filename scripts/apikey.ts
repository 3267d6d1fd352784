import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../lib/config.js';
import { openDatabase } from '../lib/database.js';
import { AppError } from '../lib/errors.js';
import { createLogger } from '../lib/logger.js';
import { ApiKeyService } from '../subgraphs/social/api-key.service.js';
import { socialMigrations } from '../subgraphs/social/migrations/index.js';
import { socialEntities } from '../subgraphs/social/social.entities.js';

const USAGE = `usage:
  npm run apikey -- create --sub USER_ID --scopes posts.read,posts.write [--name NAME] [--brands BRAND_ID,...]
  npm run apikey -- list --sub USER_ID
  npm run apikey -- revoke --sub USER_ID --id KEY_ID

Scopes may also carry the brand reach: brand:* (the default) or brand:<id>.
With embedded PGlite (no DATABASE_URL) stop the platform first: one process owns that database.`;

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
  if (!values.sub || !['create', 'list', 'revoke'].includes(command ?? '')) {
    console.error(USAGE);
    process.exit(2);
  }
  const config = loadConfig();
  const logger = createLogger({ env: { ...config.env, LOG_LEVEL: 'warn' } }, process.stderr);
  const orm = await openDatabase(config, logger, { service: 'social', entities: socialEntities, migrations: socialMigrations });
  try {
    const keys = new ApiKeyService(orm.em.fork());
    // The operator acts as the user with a full-scope bearer credential, as `npm run token` would give.
    const principal = { userId: values.sub!, scopes: null, via: 'bearer' as const };
    const list = (text: string | undefined) => (text ?? '').split(',').map((item) => item.trim()).filter(Boolean);
    if (command === 'create') {
      const { key, apiKey } = await keys.create(principal, {
        name: values.name ?? `cli ${new Date().toISOString()}`,
        scopes: list(values.scopes),
        brandIds: list(values.brands),
      });
      console.error(`API key ${apiKey.id} (${apiKey.name}) for ${apiKey.ownerId}: scopes ${apiKey.scopes.join(',')}; brands ${apiKey.brandIds?.join(',') ?? 'brand:*'}`);
      console.error('Store the key now; it is not shown again. Send it as the X-API-Key header.');
      process.stdout.write(`${key}\n`);
    } else if (command === 'list') {
      for (const apiKey of await keys.list(principal)) {
        const state = apiKey.revokedAt ? `revoked ${apiKey.revokedAt.toISOString()}` : `last used ${apiKey.lastUsedAt?.toISOString() ?? 'never'}`;
        console.log(`${apiKey.id}  ${apiKey.prefix}…  ${apiKey.name}  [${apiKey.scopes.join(',')}]  ${apiKey.brandIds?.join(',') ?? 'brand:*'}  ${state}`);
      }
    } else {
      if (!values.id) throw AppError.badInput('id', 'is required');
      const apiKey = await keys.revoke(principal, values.id);
      console.log(`revoked ${apiKey.id}`);
    }
  } finally {
    await orm.close();
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
