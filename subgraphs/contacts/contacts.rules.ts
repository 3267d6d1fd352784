import type { Config } from '../../lib/config.js';
import { allow, isAuthenticated, type RuleTree } from '../../lib/shield.js';

/**
 * The contacts description declares no credentials, so its API is open unless
 * `CONTACTS_AUTH=required`; every field still has to be named here to be reachable.
 */
export function contactsRules(config: Config): RuleTree {
  const required = config.env.CONTACTS_AUTH === 'required';
  const access = required ? isAuthenticated : allow;
  return {
    Query: {
      // Public even when CONTACTS_AUTH=required: names and verdicts only, for probes and load balancers.
      contactsHealth: allow,
      contact: access,
      contacts: access,
      contactPage: access,
      contactScroll: access,
      notes: access,
      notePage: access,
      note: access,
      attachments: access,
      attachmentPage: access,
      attachment: access,
      pipelines: access,
      pipelinePage: access,
      pipeline: access,
      stageMoves: access,
      stageMovePage: access,
    },
    Mutation: {
      createContact: access,
      updateContact: access,
      deleteContact: access,
      createNote: access,
      updateNote: access,
      deleteNote: access,
      reserveAttachmentUpload: access,
      recordAttachment: access,
      deleteAttachment: access,
      createPipeline: access,
      moveContact: access,
      importContacts: access,
    },
    // Guards contacts reached through `_entities`. Left out when the API is open: a rule on the
    // type wraps every field of every contact in a list, and `allow` would decide nothing.
    ...(required ? { Contact: access } : {}),
  };
}
