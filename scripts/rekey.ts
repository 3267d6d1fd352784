import 'reflect-metadata';
import { openDatabase } from '#lib/data/database.js';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { runTask } from '#lib/process/main.js';
import { resealSecrets } from '#subgraphs/social/integrations/reseal.js';
import { TokenCipher } from '#subgraphs/social/integrations/token-cipher.js';
import { socialMigrations } from '#subgraphs/social/migrations/index.js';
import { webhookSettingsOf } from '#subgraphs/social/webhooks/webhook.delivery.js';

exitWithHelpIfAsked(`
usage: npm run rekey      (node dist/scripts/rekey.js)

Seals every stored secret (platform tokens of the social integrations, webhook signing secrets) again
with the first key of ENCRYPTION_KEY, and prints how many. Rotating the key:
  1. ENCRYPTION_KEY=NEW,OLD on every instance (a rolling restart; each opens what the others sealed)
  2. npm run rekey
  3. ENCRYPTION_KEY=NEW once the old key opens nothing any more (after another rekey that finds no error)
A secret no listed key opens is named in an error line and left as it is; the exit code is then 1.
On embedded PGlite it takes DATA_DIR, so run it while the platform is stopped.
`);

void runTask('Rekey', async (config, logger) => {
  const orm = await openDatabase(config, logger, { service: 'social', migrations: socialMigrations, entities: [] });
  try {
    const count = await resealSecrets(
      orm.em.fork(),
      { tokens: TokenCipher.fromConfig(config), webhooks: webhookSettingsOf(config).cipher },
      logger,
    );
    console.log(`resealed ${count.resealed} secrets with the first key of ENCRYPTION_KEY`);
    if (count.unopenable) throw new Error(`${count.unopenable} sealed secrets open with no listed key (named above)`);
  } finally {
    await orm.close();
  }
});
