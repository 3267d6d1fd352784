import { requireScope, type RuleTree } from '#lib/subgraph/shield.js';

/**
 * Webhooks are settings of the account: read with settings.read, changed with settings.write. What
 * a receiver would get also needs the scope that reads it; the service checks that per event type
 * (WEBHOOK_EVENT_SCOPES), since it depends on the events asked for, not on the field.
 */
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
