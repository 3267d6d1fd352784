// Lints the REST services' OpenAPI documents with Redocly's recommended rules (redocly.yaml) and
// fails on a warning as on an error: `redocly lint` itself fails only on errors. It runs offline:
// no telemetry, no check for a newer version.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

const root = path.join(import.meta.dirname, '..');
const documents = readdirSync(path.join(root, 'schema', 'openapi'))
  .filter((name) => name.endsWith('.json'))
  .map((name) => path.join('schema', 'openapi', name));
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
const redocly = path.join(root, 'node_modules', '.bin', 'redocly');

let failed = false;
for (const document of documents) {
  const run = spawnSync(redocly, ['lint', '--format', 'json', document], { cwd: root, env, encoding: 'utf8' });
  if (run.error) throw run.error;
  const { totals, problems } = JSON.parse(run.stdout);
  const count = totals.errors + totals.warnings;
  console.log(`${document}: ${totals.errors} errors, ${totals.warnings} warnings, ${totals.ignored} ignored`);
  for (const problem of problems) {
    const where = problem.location?.[0]?.pointer ?? '';
    console.log(`  ${problem.severity} ${problem.ruleId} ${where}: ${problem.message}`);
  }
  if (count > 0 || run.status !== 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
