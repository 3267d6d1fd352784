import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.js';
import { readMultipart, type MultipartFile } from './multipart.js';
import type { ObjectStorage } from './storage.js';

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
  /** Commits the upload in the subgraph once every byte is stored; its answer is the route's. */
  commit(slot: Slot, fields: Record<string, string>): Promise<Answer>;
  /** Ends a reservation this request could not commit. */
  cancel(slot: Slot): Promise<unknown>;
}

/**
 * The REST side of the upload protocol for a multipart request: reserve, stream the file part into
 * the reserved key (never held whole in memory), commit. The subgraph ends what its commit refuses;
 * a request that fails before (a second file, a body cut short, a file too large) cancels the
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
        await storage.put(slot.storageKey, part.stream, { contentType: slot.contentType, maxBytes: slot.maxBytes });
        return slot;
      },
      discard: (slot) => storage.delete(slot.storageKey),
    });
    if (!file) throw AppError.badInput(options.fileField, options.missing);
    return await options.commit(file, fields);
  } catch (error) {
    if (reserved) await options.cancel(reserved).catch(() => undefined);
    throw error;
  }
}
