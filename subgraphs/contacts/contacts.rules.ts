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
  const access = config.env.CONTACTS_AUTH === 'required' ? isAuthenticated : allow;
  return {
    Query: Object.fromEntries(QUERIES.map((name) => [name, access])),
    Mutation: Object.fromEntries(MUTATIONS.map((name) => [name, access])),
    Contact: access,
  };
}
