import { Field, ObjectType } from 'type-graphql';

/** One named part `/health` checks; `check` resolves when the part works and rejects (or answers false) when not. */
export interface HealthCheck {
  name: string;
  check: () => Promise<boolean | void>;
}

@ObjectType({ description: 'Result of one health check' })
export class HealthCheckResult {
  @Field(() => String, { description: 'What was checked: database, storage, job queue...' }) name!: string;
  @Field(() => Boolean, { description: 'True when the check passed' }) ok!: boolean;
  @Field(() => String, { nullable: true, description: 'Why it failed; never internal details' }) detail!: string | null;
}

@ObjectType({ description: 'Health of the social service and the parts it depends on' })
export class SocialHealth {
  @Field(() => Boolean, { description: 'True when every check passed' }) ok!: boolean;
  @Field(() => [HealthCheckResult], { description: 'Each part checked, with its verdict' }) checks!: HealthCheckResult[];
}

const CHECK_TIMEOUT_MS = 3000;

/** Runs every check at once, each within a time limit, and reports which failed. */
export async function runHealthChecks(checks: readonly HealthCheck[]): Promise<SocialHealth> {
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
