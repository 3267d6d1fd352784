import { requireScope, type RuleTree } from '../../../lib/shield.js';

/** Webhooks are settings of the account: read with settings.read, changed with settings.write. */
export const webhooksRules: RuleTree = {
  Query: {
    webhooks: requireScope('settings.read'),
    webhookDeliveries: requireScope('settings.read'),
  },
  Mutation: {
    createWebhook: requireScope('settings.write'),
    updateWebhook: requireScope('settings.write'),
    deleteWebhook: requireScope('settings.write'),
    redeliverWebhookEvent: requireScope('settings.write'),
  },
};
