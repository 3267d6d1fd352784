import { allow, requireScope, type ShieldRule } from '#lib/subgraph/shield.js';

/** The contacts scopes; a token without a `scope` claim holds them all. */
export const CONTACTS_SCOPES = ['contacts.read', 'contacts.write', 'contacts.import', 'contacts.export'] as const;

export type ContactsScope = (typeof CONTACTS_SCOPES)[number];

/** What each feature's rules (`<feature>.rules.ts`) are made of: whether scopes are required, and the rule for one. */
export interface ContactsScopeRules {
  /** `CONTACTS_AUTH=required`: every field needs its scope; otherwise every field named in the rules is open. */
  required: boolean;
  /** `requireScope(name)` when scopes are required, `allow` when the API is open. */
  scope: (name: ContactsScope) => ShieldRule;
}

export function contactsScopeRules(required: boolean): ContactsScopeRules {
  return { required, scope: (name) => (required ? requireScope(name) : allow) };
}
