import type { EntityManager } from '#lib/data/database.js';
import type { Logger } from '#lib/observability/logger.js';
import type { TokenCipher } from './token-cipher.js';

/** What `npm run rekey` did: secrets sealed again with the first key, and those no key opened (each logged). */
export interface ResealCount {
  resealed: number;
  unopenable: number;
}

/** One sealed column: its table, the rows' label in error lines, and the context each value is bound to. */
interface SealedColumn {
  table: string;
  column: string;
  owner: string;
  cipher: 'tokens' | 'webhooks';
  context: (id: string) => string;
}

/**
 * Every secret the social service keeps sealed (its migrations' `*_sealed` columns) with the context
 * its code seals it under. The OAuth verifiers of connects under way are left out: they are bound to
 * the browser that started them, which is not stored, and expire within minutes, so keeping the old key
 * listed that long covers them.
 */
const SEALED_COLUMNS: SealedColumn[] = [
  {
    table: 'integration',
    column: 'access_token_sealed',
    owner: 'integration',
    cipher: 'tokens',
    context: (id) => `integration:${id}:access`,
  },
  {
    table: 'integration',
    column: 'refresh_token_sealed',
    owner: 'integration',
    cipher: 'tokens',
    context: (id) => `integration:${id}:refresh`,
  },
  { table: 'webhook', column: 'secret_sealed', owner: 'webhook', cipher: 'webhooks', context: (id) => id },
];

/**
 * Seals every stored secret again with the first key of ENCRYPTION_KEY, so the older keys can be
 * dropped from the list. A value no key opens is logged as an error naming its row and left as it is.
 * Each row is written only if it still holds what was read, so a token renewed meanwhile is not undone.
 */
export async function resealSecrets(
  em: EntityManager,
  ciphers: Record<SealedColumn['cipher'], TokenCipher>,
  logger: Logger,
): Promise<ResealCount> {
  const count: ResealCount = { resealed: 0, unopenable: 0 };
  const connection = em.getConnection();
  for (const sealed of SEALED_COLUMNS) {
    const cipher = ciphers[sealed.cipher];
    const rows = await connection.execute<Array<{ id: string; value: string }>>(
      `select id, ${sealed.column} as value from social.${sealed.table} where ${sealed.column} is not null order by id`,
    );
    for (const { id, value } of rows) {
      let plain: string;
      try {
        plain = cipher.open(value, sealed.context(id), `${sealed.owner} ${id}`);
      } catch (error) {
        count.unopenable += 1;
        logger.error(
          { table: sealed.table, column: sealed.column, id, reason: (error as Error).message },
          'not resealed',
        );
        continue;
      }
      const written = await connection.execute(
        `update social.${sealed.table} set ${sealed.column} = ? where id = ? and ${sealed.column} = ?`,
        [cipher.seal(plain, sealed.context(id)), id, value],
        'run',
      );
      count.resealed += (written as { affectedRows?: number }).affectedRows ?? 0;
    }
  }
  return count;
}
