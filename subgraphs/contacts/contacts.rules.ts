import type { Config } from '../../lib/config.js';
import { allow, isAuthenticated, type RuleTree } from '../../lib/shield.js';

const QUERIES = [
  'contact',
  'contacts',
  'contactPage',
  'contactScroll',
  'notes',
  'notePage',
  'note',
  'attachments',
  'attachmentPage',
  'attachment',
  'pipelines',
  'pipelinePage',
  'pipeline',
  'stageMoves',
  'stageMovePage',
] as const;

const MUTATIONS = [
  'createContact',
  'updateContact',
  'deleteContact',
  'createNote',
  'updateNote',
  'deleteNote',
  'reserveAttachmentUpload',
  'recordAttachment',
  'deleteAttachment',
  'createPipeline',
  'moveContact',
  'importContacts',
] as const;

/**
 * The contacts description declares no credentials, so its API is open unless
 * `CONTACTS_AUTH=required`; every field still has to be named here to be reachable.
 */
export function contactsRules(config: Config): RuleTree {
  const required = config.env.CONTACTS_AUTH === 'required';
  const access = required ? isAuthenticated : allow;
  return {
    Query: Object.fromEntries(QUERIES.map((name) => [name, access])),
    Mutation: Object.fromEntries(MUTATIONS.map((name) => [name, access])),
    // Guards contacts reached through `_entities`. Left out when the API is open: a rule on the
    // type wraps every field of every contact in a list, and `allow` would decide nothing.
    ...(required ? { Contact: access } : {}),
  };
}
