import type { RuleTree } from '#lib/subgraph/shield.js';
import type { ContactsScopeRules } from '../contacts.scopes.js';

export function attachmentsRules({ scope }: ContactsScopeRules): RuleTree {
  const access = scope('contacts.read');
  const change = scope('contacts.write');
  return {
    Query: { attachments: access, attachmentPage: access, attachment: access },
    Mutation: {
      reserveAttachmentUpload: change,
      recordAttachment: change,
      cancelAttachmentUpload: change,
      deleteAttachment: change,
    },
  };
}
