import type { Config } from '#lib/config.js';
import { allow, answerOfWrite, or, requireScope, type RuleTree } from '#lib/subgraph/shield.js';

/** The contacts scopes; a token without a `scope` claim holds them all. */
export const CONTACTS_SCOPES = ['contacts.read', 'contacts.write', 'contacts.import', 'contacts.export'] as const;

/**
 * The contacts description declares no credentials, so its API is open unless
 * `CONTACTS_AUTH=required`; every field still has to be named here to be reachable. Required, each
 * field needs its scope: reads `contacts.read`, changes `contacts.write`, the CSV import and the
 * export's walk their own. The contacts are one shared book for the organisation (no owners): a scope
 * reaches every contact.
 */
export function contactsRules(config: Config): RuleTree {
  const required = config.env.CONTACTS_AUTH === 'required';
  const scope = (name: (typeof CONTACTS_SCOPES)[number]) => (required ? requireScope(name) : allow);
  const access = scope('contacts.read');
  const change = scope('contacts.write');
  return {
    Query: {
      // Public even when CONTACTS_AUTH=required: names and verdicts only, for probes and load balancers.
      contactsHealth: allow,
      contact: access,
      contacts: access,
      contactPage: access,
      // The export's walk through every contact.
      contactScroll: scope('contacts.export'),
      // Leave to stream the export's bytes (contact-export.routes.ts): the same scope as the walk.
      contactExportGrant: scope('contacts.export'),
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
      contactImport: scope('contacts.import'),
      contactImportResult: scope('contacts.import'),
    },
    Mutation: {
      createContact: change,
      updateContact: change,
      deleteContact: change,
      createNote: change,
      updateNote: change,
      deleteNote: change,
      reserveAttachmentUpload: change,
      recordAttachment: change,
      cancelAttachmentUpload: change,
      deleteAttachment: change,
      createPipeline: change,
      moveContact: change,
      reserveContactImport: scope('contacts.import'),
      importContacts: scope('contacts.import'),
      cancelContactImport: scope('contacts.import'),
      startContactImport: scope('contacts.import'),
      cancelContactImportJob: scope('contacts.import'),
    },
    // Guards contacts reached through `_entities`. Left out when the API is open: a rule on the
    // type wraps every field of every contact in a list, and `allow` would decide nothing. An export
    // reads every field of every contact, so its scope reads them too; a change reads back the
    // contact it returns. contacts.read comes first: its refusal is the one a reader is told.
    ...(required ? { Contact: or(access, scope('contacts.export'), answerOfWrite(change)) } : {}),
  };
}
