import type { Config } from '#lib/config.js';
import { mergeRules, type RuleTree } from '#lib/subgraph/shield.js';
import { attachmentsRules } from './attachments/attachments.rules.js';
import { contactRules } from './contact/contact.rules.js';
import { duplicatesRules } from './duplicates/duplicates.rules.js';
import { mergingRules } from './merge/merge.rules.js';
import { contactsScopeRules, type ContactsScopeRules } from './contacts.scopes.js';
import { exportRules } from './export/export.rules.js';
import { healthRules } from './health/health.rules.js';
import { importRules } from './import/import.rules.js';
import { notesRules } from './notes/notes.rules.js';
import { pipelinesRules } from './pipelines/pipelines.rules.js';

/**
 * The contacts description declares no credentials, so its API is open unless
 * `CONTACTS_AUTH=required`; every field still has to be named here to be reachable. Required, each
 * field needs its scope: reads `contacts.read`, changes `contacts.write`, the CSV import and the
 * export's walk their own. The contacts are one shared book for the organisation (no owners): a scope
 * reaches every contact. Kept per feature (`<feature>.rules.ts`) and merged here, as social's are.
 */
export function contactsRules(
  config: Config,
  parts: ((scopes: ContactsScopeRules) => RuleTree)[] = [
    healthRules,
    contactRules,
    duplicatesRules,
    mergingRules,
    exportRules,
    notesRules,
    attachmentsRules,
    pipelinesRules,
    importRules,
  ],
): RuleTree {
  const scopes = contactsScopeRules(config.env.CONTACTS_AUTH === 'required');
  return mergeRules(parts.map((part) => part(scopes)));
}
