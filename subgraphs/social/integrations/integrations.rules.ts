import { allow, requireScope, type RuleTree } from '#lib/subgraph/shield.js';

export const integrationsRules: RuleTree = {
  Query: {
    integrations: requireScope('integrations.read'),
    integrationPlatforms: requireScope('integrations.read'),
  },
  Mutation: {
    startIntegrationConnect: requireScope('integrations.write'),
    // The platform's redirect brings no bearer token: the single-use state, bound server-side to
    // the user who started the connect with integrations.write, is the credential here.
    completeIntegrationConnect: allow,
  },
};
