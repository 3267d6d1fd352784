import type { AuthContext } from '#lib/subgraph/shield.js';
import type { IntegrationService } from './integration.service.js';

/** What the integration resolvers use of a request's context (social.context.ts makes it). */
export interface IntegrationsContext extends AuthContext {
  integrations: IntegrationService;
}
