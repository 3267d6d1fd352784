import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../paths.js';

/**
 * The compiled module a worker thread runs, named beside the module that starts it
 * (`threadModule(import.meta.url, './x.worker.js')`). Compiled, that is the file beside it. Run from
 * the TypeScript sources (Jest transpiles them inside its own process, which a new thread does not
 * share), it is the build of the same source under dist/, which `npm test` makes before Jest starts.
 */
export function threadModule(startedFrom: string, relative: string): URL {
  const beside = new URL(relative, startedFrom);
  if (!startedFrom.endsWith('.ts')) return beside;
  const source = path.relative(PROJECT_ROOT, fileURLToPath(beside));
  return pathToFileURL(path.join(PROJECT_ROOT, 'dist', source));
}
