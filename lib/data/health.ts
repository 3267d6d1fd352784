import { Directive, Field, ObjectType } from 'type-graphql';
import type { EntityManager } from './database.js';

/**
 * The checks behind each service's `GET /health` and `/readyz`, the same in all three subgraphs:
 * each names a part (database, storage, job queue...) and resolves when it works.
 */

/** One named part `/health` checks; `check` resolves when the part works and rejects (or answers false) when not. */
export interface HealthCheck {
  name: string;
  check: () => Promise<boolean | void>;
}

@ObjectType({ description: 'Result of one health check' })
@Directive('@shareable')
export class HealthCheckResult {
  @Field(() => String, { description: 'What was checked: database, storage, job queue...' }) name!: string;
  @Field(() => Boolean, { description: 'True when the check passed' }) ok!: boolean;
  @Field(() => String, { nullable: true, description: 'Why it failed; never internal details' }) detail!: string | null;
}

/** What a service's health query answers (the contacts and surveys services share this type; social has its own). */
@ObjectType({ description: 'Health of a service and the parts it depends on (its database first)' })
@Directive('@shareable')
export class ServiceHealth {
  @Field(() => Boolean, { description: 'True when every check passed' }) ok!: boolean;
  @Field(() => [HealthCheckResult], { description: 'Each part checked, with its verdict' })
  checks!: HealthCheckResult[];
}

const CHECK_TIMEOUT_MS = 3000;

/** Runs every check at once, each within a time limit, and reports which failed. */
export async function runHealthChecks(checks: readonly HealthCheck[]): Promise<ServiceHealth> {
  const results = await Promise.all(
    checks.map(async ({ name, check }): Promise<HealthCheckResult> => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const verdict = await Promise.race([
          check(),
          new Promise<false>((resolve) => {
            timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS);
          }),
        ]);
        return verdict === false ? { name, ok: false, detail: 'not answering' } : { name, ok: true, detail: null };
      } catch {
        return { name, ok: false, detail: 'failing' };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ok: results.every((result) => result.ok), checks: results };
}

/** The service's own database answers a trivial query. */
export function databaseCheck(em: EntityManager): HealthCheck {
  return { name: 'database', check: async () => void (await em.getConnection().execute('select 1')) };
}
