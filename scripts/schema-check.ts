import { readFileSync } from 'node:fs';
import path from 'node:path';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import {
  baseCommit,
  breakingChanges,
  fileAt,
  SCHEMA_CHANGELOG_PATH,
  SUPERGRAPH_PATH,
  unlistedChanges,
} from './schema-changes.js';

exitWithHelpIfAsked(`
usage: npm run schema:check [-- --base <commit>]     (part of npm run lint and npm test)

Compares schema/supergraph.graphql with the one committed at the base (where this branch left main;
on main, the commit before HEAD) using GraphQL Inspector, and fails on a breaking change that
schema/CHANGELOG.md does not list. List one there as \`TYPE\` \`path\` (the two names this prints).
`);

/** `npm run schema:check`: exit 1 on an unlisted breaking change of the supergraph. */
async function main(): Promise<void> {
  const baseIndex = process.argv.indexOf('--base');
  const base = baseIndex > 0 ? process.argv[baseIndex + 1] : baseCommit(PROJECT_ROOT);
  const before = base && fileAt(PROJECT_ROOT, base, SUPERGRAPH_PATH);
  if (!before) {
    // A clone without history (a tarball, a shallow clone of one commit) has nothing to compare with.
    console.log(`schema check: no committed supergraph to compare with (${base ?? 'no git history'}); skipped`);
    return;
  }
  const after = readFileSync(path.join(PROJECT_ROOT, SUPERGRAPH_PATH), 'utf8');
  const changes = await breakingChanges(before, after);
  const unlisted = unlistedChanges(changes, readFileSync(path.join(PROJECT_ROOT, SCHEMA_CHANGELOG_PATH), 'utf8'));
  console.log(
    `schema check against ${base.slice(0, 12)}: ${changes.length} breaking change(s), ${unlisted.length} not in ${SCHEMA_CHANGELOG_PATH}`,
  );
  if (!unlisted.length) return;
  for (const change of unlisted) console.error(`  - \`${change.type}\` \`${change.path}\`: ${change.message}`);
  console.error(`List each in ${SCHEMA_CHANGELOG_PATH} (with why and what clients do instead), or undo it.`);
  process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
