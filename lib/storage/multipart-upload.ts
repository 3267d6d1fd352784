import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.js';
import { readMultipart, type MultipartFile } from './multipart.js';
import type { ObjectStorage, WrittenObject } from './storage.js';

/** What a subgraph reserved for one upload (`lib/storage/uploads.ts`): the key its bytes go to, their type and their limit. */
export interface UploadSlot {
  storageKey: string;
  contentType: string;
  maxBytes: number;
}

export interface ReceiveUploadOptions<Slot extends UploadSlot, Answer> {
  /** The form field carrying the file. */
  fileField: string;
  /** How to send the file, said when the request holds none. */
  missing: string;
  /** Reserves the upload in the subgraph once the file part begins (fields sent before it are given). */
  reserve(file: MultipartFile, fieldsSoFar: Record<string, string>): Promise<Slot>;
  /**
   * Commits the upload in the subgraph once every byte is stored; its answer is the route's.
   * `received` is what was stored, measured as it streamed: a retry of the request sends the same
   * (the commit's `contentDigest`), whatever slot it was given.
   */
  commit(slot: Slot, fields: Record<string, string>, received: WrittenObject): Promise<Answer>;
  /** Ends a reservation this request could not commit. */
  cancel(slot: Slot): Promise<unknown>;
  /**
   * Whether the commit's answer was an earlier request's, given again for its Idempotency-Key
   * (lib/data/idempotency.ts): nothing was committed, so this request's reservation is cancelled.
   */
  replayed(): boolean;
}

/**
 * The REST side of the upload protocol for a multipart request: reserve, stream the file part into
 * the reserved key (never held whole in memory; measured and hashed on the way), commit. The
 * subgraph ends what its commit refuses; a request that fails before (a second file, a body cut
 * short, a file too large), or whose commit was answered from an earlier request, cancels the
 * reservation at once, and the sweep covers a process that died meanwhile.
 */
export async function receiveUpload<Slot extends UploadSlot, Answer>(
  req: IncomingMessage,
  storage: ObjectStorage,
  options: ReceiveUploadOptions<Slot, Answer>,
): Promise<Answer> {
  let reserved: Slot | undefined;
  try {
    const { fields, file } = await readMultipart(req, {
      fileField: options.fileField,
      onFile: async (part, fieldsSoFar) => {
        const slot = await options.reserve(part, fieldsSoFar);
        reserved = slot;
        const received = await storage.put(slot.storageKey, part.stream, {
          contentType: slot.contentType,
          maxBytes: slot.maxBytes,
        });
        return { slot, received };
      },
      discard: ({ slot }) => storage.delete(slot.storageKey),
    });
    if (!file) throw AppError.badInput(options.fileField, options.missing);
    const answer = await options.commit(file.slot, fields, file.received);
    if (options.replayed()) await options.cancel(file.slot).catch(() => undefined);
    return answer;
  } catch (error) {
    if (reserved) await options.cancel(reserved).catch(() => undefined);
    throw error;
  }
}
