import type { EntityManager } from '#lib/data/database.js';

/** What the health resolver uses of a request's context (surveys.context.ts makes it). */
export interface HealthContext {
  em: EntityManager;
}
