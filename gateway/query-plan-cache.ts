/** How many query plans a gateway keeps; the REST adapters' operations are a few dozen. */
const QUERY_PLAN_CACHE_SIZE = 500;

/**
 * The gateway's query-plan cache (Apollo's `queryPlannerConfig.cache`), bounded by count, with its
 * hits and misses: a repeated operation must be planned once (a test holds every REST operation to it).
 */
export class QueryPlanCache<Plan = unknown> {
  readonly stats = { hits: 0, misses: 0 };
  private readonly plans = new Map<string, Plan>();

  get(key: string): Promise<Plan | undefined> {
    const plan = this.plans.get(key);
    if (plan === undefined) this.stats.misses++;
    else this.stats.hits++;
    return Promise.resolve(plan);
  }

  set(key: string, plan: Plan): Promise<void> {
    if (this.plans.size >= QUERY_PLAN_CACHE_SIZE) this.plans.delete(this.plans.keys().next().value!);
    this.plans.set(key, plan);
    return Promise.resolve();
  }

  delete(key: string): Promise<boolean> {
    return Promise.resolve(this.plans.delete(key));
  }

  /** Apollo clears the store when the supergraph changes. */
  clear(): void {
    this.plans.clear();
  }
}
