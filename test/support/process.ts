import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '#lib/paths.js';

/**
 * `npm start` as a user runs it (the built entry point), waiting until it prints its URLs; `output` is all it
 * printed so far. `root` is the tree whose build runs: this one, or another release's (the upgrade test).
 */
export async function startPlatformProcess(
  env: Record<string, string>,
  root = PROJECT_ROOT,
): Promise<{ child: ChildProcessWithoutNullStreams; output: () => string }> {
  const child = spawn(process.execPath, [path.join(root, 'dist', 'scripts', 'start.js')], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 150 s:\n${output}`)), 150_000);
    const check = () => {
      if (output.includes('Platform running')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${output}`));
    });
  });
  return { child, output: () => output };
}
