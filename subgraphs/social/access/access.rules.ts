import { isAuthenticated, requireScope, type RuleTree } from '#lib/subgraph/shield.js';

export const accessRules: RuleTree = {
  Query: {
    viewer: isAuthenticated,
    brand: requireScope('brands.read'),
    brands: requireScope('brands.read'),
    brandPage: requireScope('brands.read'),
    brandSettings: requireScope('settings.read'),
    // Bearer-only is checked by the service: it needs the principal's kind, not a scope.
    apiKeys: isAuthenticated,
  },
  Mutation: {
    createBrand: requireScope('settings.write'),
    updateBrandSettings: requireScope('settings.write'),
    createApiKey: isAuthenticated,
    revokeApiKey: isAuthenticated,
  },
};
