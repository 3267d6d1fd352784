import { on } from 'node:events';
import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { AppError, type ErrorCode, type FieldProblem } from '#lib/errors.js';
import { threadModule } from '#lib/process/thread-module.js';
import type { BatchPlan, ImportBatch } from './contact-import.batches.js';
import type { ImportLimits } from './contact-import.csv.js';

/** What the import's thread starts with: the file's limits and its task, the first read's check or the batches. */
export interface ThreadData {
  limits: ImportLimits;
  task: { kind: 'check' } | { kind: 'batches'; plan: BatchPlan };
}

/** What the first read of a file answers (`checkCsv`). */
export interface CheckedFile {
  header: string[];
  rows: number;
}

/** From the job to the thread: a chunk of the file, its end, or "go on to the next batch". */
export type JobSays = { kind: 'bytes'; chunk: Uint8Array } | { kind: 'end' } | { kind: 'next' };

/** From the thread to the job. */
export type ThreadSays =
  | { kind: 'more' }
  | { kind: 'checked'; file: CheckedFile }
  | { kind: 'batch'; batch: ImportBatch }
  | { kind: 'done' }
  | { kind: 'refused'; code: ErrorCode; message: string; fields: FieldProblem[] };

type Answer = Extract<ThreadSays, { kind: 'checked' | 'batch' }>;

/**
 * How much heap the thread may take. It holds one batch and the one being read: a few megabytes live,
 * and what it allocates in passing stays in a heap this size instead of the service's.
 */
const THREAD_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 };

/**
 * The file's first read in a worker thread (contact-import.worker.ts): its header and number of data
 * rows, or the AppError that refuses it.
 */
export async function checkInThread(bytes: Readable, limits: ImportLimits): Promise<CheckedFile> {
  for await (const answer of answersOf(bytes, { limits, task: { kind: 'check' } }))
    if (answer.kind === 'checked') return answer.file;
  throw new Error('the import thread ended without checking the file');
}

/**
 * The file's batches, read in a worker thread. Checking a row against the API's rules (class-validator)
 * takes about ten microseconds and twenty kilobytes of short-lived objects: a million rows on the
 * service's own thread held its API requests back (p99) and, with the batches waiting for their
 * commit, swelled its heap by some 350 MB before each full collection. In the thread, the service
 * keeps its event loop and its heap; the thread reads the next batch while the job writes the one
 * before, and waits for the job to ask for it (one batch ahead).
 */
export async function* batchesInThread(
  bytes: Readable,
  limits: ImportLimits,
  plan: BatchPlan,
): AsyncGenerator<ImportBatch> {
  for await (const answer of answersOf(bytes, { limits, task: { kind: 'batches', plan } }))
    if (answer.kind === 'batch') yield answer.batch;
}

/**
 * One conversation with a new thread: hands it `bytes` chunk by chunk as it asks for them, and answers
 * what it says; after a batch, the thread goes on once the consumer asks for the next answer. The
 * thread ends with the conversation, however it ends.
 */
async function* answersOf(bytes: Readable, data: ThreadData): AsyncGenerator<Answer> {
  const thread = new Worker(threadModule(import.meta.url, './contact-import.worker.js'), {
    workerData: data,
    resourceLimits: THREAD_LIMITS,
  });
  const tell = (message: JobSays) => thread.postMessage(message);
  const chunks = bytes[Symbol.asyncIterator]();
  let readFailure: unknown;
  const handOver = () =>
    chunks.next().then(
      (next) => tell(next.done ? { kind: 'end' } : { kind: 'bytes', chunk: next.value as Buffer }),
      (error: unknown) => {
        readFailure = error;
        void thread.terminate();
      },
    );
  try {
    for await (const [message] of on(thread, 'message', { close: ['exit'] }) as AsyncIterable<[ThreadSays]>) {
      if (message.kind === 'more') void handOver();
      else if (message.kind === 'done') return;
      else if (message.kind === 'refused')
        throw new AppError(message.code, message.message, { fields: message.fields });
      else {
        yield message;
        if (message.kind === 'batch') tell({ kind: 'next' });
      }
    }
    if (readFailure instanceof Error) throw readFailure;
    throw new Error('the import thread stopped before the end of the file', { cause: readFailure });
  } finally {
    bytes.destroy();
    await thread.terminate();
  }
}
