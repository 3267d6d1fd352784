import { databaseAnswers, type Orm } from '../../lib/database.js';
import type { Deps } from '../../lib/service.js';
import { createStorage } from '../../lib/storage.js';
import { startSubgraphService, type RunningSubgraph } from '../../lib/subgraph.js';
import { socialMigrations } from './migrations/index.js';
import { createSocialContext, resolveSocialPrincipal, type SocialContext, type SocialRuntime } from './social.context.js';
import { socialEntities } from './social.entities.js';
import { socialSubgraph } from './social.subgraph.js';
import { Outreach, startOutreach } from './social.runtime.js';

export interface SocialSubgraphOptions {
  port: number;
  onQuery?: (sql: string) => void;
}

export interface RunningSocialSubgraph extends RunningSubgraph {
  runtime: SocialRuntime;
}

/** One request's context: the caller (bearer or API key, resolved on the request's own fork) and its services. */
export async function socialContextFor(runtime: SocialRuntime, orm: Orm, req: Parameters<typeof resolveSocialPrincipal>[2]): Promise<SocialContext> {
  const em = orm.em.fork();
  return createSocialContext(runtime, em, await resolveSocialPrincipal(runtime.deps, em, req));
}

export async function startSocialSubgraph(deps: Deps, options: SocialSubgraphOptions): Promise<RunningSocialSubgraph> {
  const storage = createStorage(deps.config);
  const runtime: SocialRuntime = { deps, storage, healthChecks: [], outreach: new Outreach(deps.config, deps.logger, storage) };
  const running = await startSubgraphService<SocialContext>(deps, {
    service: 'social',
    entities: socialEntities,
    migrations: socialMigrations,
    definition: socialSubgraph(),
    port: options.port,
    onQuery: options.onQuery,
    afterOpen: async (orm) => {
      runtime.healthChecks.push({ name: 'database', check: () => databaseAnswers(orm) }, { name: 'storage', check: () => runtime.storage.check() });
      // The job queue lives in the service's database: it starts once that is open and stops before it closes.
      return startOutreach(runtime, orm);
    },
    context: (orm, req) => socialContextFor(runtime, orm, req),
  });
  return { ...running, runtime };
}
