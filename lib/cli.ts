/**
 * `--help` (or `-h`) among a command's arguments: prints its usage and exits 0, before any setting is
 * read or anything starts, so help works even where the configuration would be refused.
 */
export function exitWithHelpIfAsked(usage: string, args: readonly string[] = process.argv.slice(2)): void {
  if (!args.includes('--help') && !args.includes('-h')) return;
  process.stdout.write(`${usage.trim()}\n`);
  process.exit(0);
}
