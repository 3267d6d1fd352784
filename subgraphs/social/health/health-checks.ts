import { Field, ObjectType } from 'type-graphql';

/** One named part `/health` checks; `check` resolves when the part works and rejects (or answers false) when not. */
export interface HealthCheck {
  name: string;
  check: () => Promise<boolean | void>;
}

@ObjectType({ description: 'Result of one health check' })
export class HealthCheckResult {
  @Field(() => String) name!: string;
  @Field(() => Boolean) ok!: boolean;
  @Field(() => String, { nullable: true, description: 'Why it failed; never internal details' }) detail!: string | null;
}

@ObjectType({ description: 'Health of the social service and the parts it depends on' })
export class SocialHealth {
  @Field(() => Boolean) ok!: boolean;
  @Field(() => [HealthCheckResult]) checks!: HealthCheckResult[];
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
