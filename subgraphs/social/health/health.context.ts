import type { HealthCheck } from './health-checks.js';

/** What the health resolver uses of a request's context (social.context.ts makes it). */
export interface HealthContext {
  healthChecks: readonly HealthCheck[];
}
