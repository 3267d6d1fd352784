import type { Config } from '../../lib/config.js';
import { allow, isAuthenticated, type RuleTree } from '../../lib/shield.js';

/**
 * The contacts description declares no credentials, so its API is open unless
 * `CONTACTS_AUTH=required`; every field still has to be named here to be reachable.
 */
export function contactsRules(config: Config): RuleTree {
  const access = config.env.CONTACTS_AUTH === 'required' ? isAuthenticated : allow;
  return {
    Query: { contact: access, contacts: access, contactPage: access },
    Mutation: { createContact: access, updateContact: access, deleteContact: access },
    Contact: access,
  };
}
