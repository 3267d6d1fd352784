// The decorators of ContactInput (type-graphql, class-validator) read their metadata through this.
import 'reflect-metadata';
import { Readable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import { AppError } from '#lib/errors.js';
import { batchesOf } from './contact-import.batches.js';
import { checkCsv, inFileTerms, recordsOf } from './contact-import.csv.js';
import type { ThreadData, ThreadSays, JobSays } from './contact-import.thread.js';

/**
 * The import's thread (contact-import.thread.ts starts it): reads the file's bytes as the job hands
 * them over and does its task: the first read's check of the whole file, or the rows parsed and
 * checked into batches, handed back one at a time, the next read while the job writes the one before.
 */
const port = parentPort!;
const { limits, task } = workerData as ThreadData;
const say = (message: ThreadSays) => port.postMessage(message);

let wake: (() => void) | undefined;
// Asked for more whenever it has room; the job answers each ask with one chunk of the file, or its end.
const bytes = new Readable({ read: () => say({ kind: 'more' }) });
port.on('message', (message: JobSays) => {
  if (message.kind === 'bytes') bytes.push(message.chunk);
  else if (message.kind === 'end') bytes.push(null);
  else wake?.();
});

try {
  const records = recordsOf(bytes, limits);
  if (task.kind === 'check') say({ kind: 'checked', file: await checkCsv(records, limits) });
  else {
    for await (const batch of batchesOf(records, task.plan)) {
      say({ kind: 'batch', batch });
      await new Promise<void>((resolve) => (wake = resolve));
    }
  }
  say({ kind: 'done' });
} catch (error) {
  const failure = inFileTerms(error, limits.maxRecordBytes);
  if (!(failure instanceof AppError)) throw failure;
  say({ kind: 'refused', code: failure.code, message: failure.message, fields: failure.fields });
}
port.close();
