import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityClass, FilterQuery, OrderDefinition } from '@mikro-orm/core';
import { isCheckable, looksLike, normalizeContentType, SIGNATURE_BYTES } from '../http/content-type.js';
import type { EntityManager } from '../data/database.js';
import { AppError, ErrorCode } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { randomToken } from '../secrets.js';
import type { ObjectStorage, PresignedUpload } from './storage.js';
import { untraced } from '../observability/tracing.js';

/**
 * One upload protocol for every file a client sends (contact attachments and imports, survey assets,
 * social media):
 *
 *   1. reserve: the service checks the declaration (type, size) against its own policy, records its
 *      row as pending with an expiry, and the bytes get a STAGING key (`staging/<final key>`): a signed
 *      or presigned URL, or the REST adapter streaming a multipart body there.
 *   2. bytes arrive at the staging key, never at the final one.
 *   3. commit: the staged object is first moved out of the URL's reach into a key of the commit's own,
 *      checked there (the declared size, the type from its first bytes, the SHA-256 when the client
 *      gave one) and moved into the final key, which must not exist yet (the file store links it
 *      exclusively; S3 copies and deletes). Bytes that fail a check are deleted. After the move, an upload URL reaches nothing
 *      anyone reads: the file store's refuses (the final key exists), and what S3's writes stays in the
 *      staging key until the bucket's lifecycle rule drops it.
 *   4. sweep: a reservation whose URL expired more than SWEEP_GRACE_MS ago and was never committed is
 *      deleted, row and staged bytes (`startUploadSweeper`, run by each service's runtime).
 *
 * The service keeps what is its own: its limits and allowed types (`UploadPolicy`), and the row it
 * records, whose state change after a commit is conditional on it still being pending.
 */

export interface UploadPolicy {
  /** Largest file accepted, in bytes. */
  maxBytes: number;
  /** The content types accepted (normalized); null: any media type, whose first bytes are checked when its type is one `lib/http/content-type.ts` knows. */
  allowedTypes: readonly string[] | null;
}

/** What a reservation says about its bytes. */
export interface DeclaredUpload {
  /** Where the bytes live once committed. */
  key: string;
  contentType: string;
  /** Exact size in bytes; null when the client could not say (a multipart part): then up to the policy's `maxBytes`. */
  size: number | null;
  /** When the upload URL expires; SWEEP_GRACE_MS later the reservation belongs to the sweep, and a commit is refused. */
  expiresAt?: Date | null;
}

export interface CommittedUpload {
  size: number;
  /** SHA-256 (hex) of the committed bytes, when the commit read them all (`hash`, or a `sha256` to match). */
  sha256: string | null;
}

/** How long a reservation outlives its URL: a commit sent right after the last PUT still finds it. */
export const SWEEP_GRACE_MS = 15 * 60 * 1000;
/** How often each service sweeps. */
export const SWEEP_EVERY_MS = 5 * 60 * 1000;
/** Reservations swept in one go; the next round takes the rest. */
export const SWEEP_BATCH = 100;

const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** Where the bytes of an upload wait for their commit. */
export function stagingKeyOf(key: string): string {
  return `staging/${key}`;
}

/** The expiry before which an uncommitted reservation is swept at `now`. */
export function sweepBefore(now: Date): Date {
  return new Date(now.getTime() - SWEEP_GRACE_MS);
}

/**
 * Checks a declaration against the policy and answers its normalized content type: a type the policy
 * does not allow, or a size that is not a whole number of bytes from 1 to `maxBytes`, is refused
 * (400, or 413 over the limit), naming the field.
 */
export function checkDeclaration(
  policy: UploadPolicy,
  declared: { contentType: string | null | undefined; size?: number | null },
): string {
  const contentType = normalizeContentType(String(declared.contentType ?? '')) || 'application/octet-stream';
  if (policy.allowedTypes ? !policy.allowedTypes.includes(contentType) : !MEDIA_TYPE.test(contentType)) {
    throw AppError.badInput(
      'contentType',
      policy.allowedTypes
        ? `must be one of ${policy.allowedTypes.join(', ')}`
        : 'must be a media type such as text/plain',
    );
  }
  if (declared.size !== undefined && declared.size !== null) {
    if (!Number.isInteger(declared.size) || declared.size < 1)
      throw AppError.badInput('size', 'must be a whole number of bytes, at least 1');
    if (declared.size > policy.maxBytes) throw tooLarge('size', policy.maxBytes);
  }
  return contentType;
}

/** A URL for the bytes of `declared`, writing its staging key and closed once it is committed. */
export function presignUpload(
  storage: ObjectStorage,
  declared: DeclaredUpload & { size: number },
  options: { expiresInSeconds: number; baseUrl: string },
): Promise<PresignedUpload> {
  return storage.presignPut(stagingKeyOf(declared.key), {
    contentType: declared.contentType,
    size: declared.size,
    expiresInSeconds: options.expiresInSeconds,
    baseUrl: options.baseUrl,
    commitKey: declared.key,
  });
}

/**
 * Checks the staged bytes of `declared` and moves them into its key. Refusals: CONFLICT with state
 * `awaiting-upload` while nothing has arrived (nothing changes); BAD_USER_INPUT or PAYLOAD_TOO_LARGE
 * naming what is wrong (the staged bytes are deleted, so the client may send them again while its URL
 * lasts); CONFLICT when the key is taken already (an earlier commit), another commit holds the bytes,
 * or the reservation is past its sweep (state `expired`). `hash` reads every byte for the SHA-256,
 * which `sha256` (when given) must match; without either only the first bytes are read.
 */
export async function commitUpload(
  storage: ObjectStorage,
  declared: DeclaredUpload,
  policy: UploadPolicy,
  options: { sha256?: string | null; hash?: boolean } = {},
): Promise<CommittedUpload> {
  if (declared.expiresAt && declared.expiresAt < sweepBefore(new Date())) {
    throw new AppError(ErrorCode.CONFLICT, 'The upload expired before it was committed; ask for a new one', {
      details: { state: 'expired' },
    });
  }
  const staging = stagingKeyOf(declared.key);
  if ((await storage.size(staging)) === null) {
    if ((await storage.size(declared.key)) !== null)
      throw new AppError(ErrorCode.CONFLICT, 'The upload has already been committed', {
        details: { state: 'committed' },
      });
    throw new AppError(
      ErrorCode.CONFLICT,
      'The file has not been uploaded yet; send its bytes to the upload URL first',
      { details: { state: 'awaiting-upload' } },
    );
  }
  // The bytes are taken out of the URL's reach first, into a key of this commit alone: what is checked
  // below is exactly what moves into place, whatever is sent to the URL meanwhile.
  const snapshot = `${staging}.commit-${randomToken(9)}`;
  await storage.move(staging, snapshot).catch((error: unknown) => {
    throw error instanceof AppError && error.code === ErrorCode.NOT_FOUND
      ? new AppError(ErrorCode.CONFLICT, 'Another commit of this upload is under way', {
          details: { state: 'committing' },
        })
      : error;
  });
  try {
    const size = (await storage.size(snapshot)) ?? 0;
    if (declared.size !== null && size !== declared.size)
      throw AppError.badInput('size', `the uploaded file has ${size} bytes; ${declared.size} were declared`);
    if (size > policy.maxBytes) throw tooLarge('file', policy.maxBytes);
    if (size === 0) throw AppError.badInput('file', 'must not be empty');
    const wantHash = Boolean(options.hash || options.sha256);
    const { head, sha256 } = wantHash
      ? await readAll(storage, snapshot)
      : { head: await storage.readStart(snapshot, SIGNATURE_BYTES), sha256: null };
    if (isCheckable(declared.contentType) && !looksLike(declared.contentType, head)) {
      throw AppError.badInput('contentType', `the uploaded bytes are not ${declared.contentType}`);
    }
    if (options.sha256 && options.sha256.toLowerCase() !== sha256)
      throw AppError.badInput('sha256', 'does not match the uploaded bytes');
    await storage.move(snapshot, declared.key);
    // Whatever reached the URL while this commit ran is no one's.
    await storage.delete(staging).catch(() => undefined);
    return { size, sha256 };
  } finally {
    // Refused bytes go, so the client may send them again while its URL lasts; moved ones are gone already.
    // (A process that dies right here leaves the snapshot under staging/: the bucket's lifecycle rule takes it.)
    await storage.delete(snapshot).catch(() => undefined);
  }
}

/**
 * Deletes what uncommitted reservations left in storage: their staged bytes, and final ones a commit
 * moved before it stopped (its process ended before the row changed). Only for reservations past
 * `sweepBefore`, which no commit touches any more.
 */
export async function dropUploadBytes(storage: ObjectStorage, keys: readonly string[]): Promise<void> {
  for (const key of keys) {
    await storage.delete(stagingKeyOf(key));
    await storage.delete(key);
  }
}

/** What a table of upload reservations holds: each row's storage key and the end of its upload window. */
interface Reservation {
  id: string;
  storageKey: string;
  uploadExpiresAt: Date | null;
}

/**
 * Deletes a batch of the reservations of `entity` still pending (`pending` tells which rows are)
 * whose upload window closed before `sweepBefore(now)`: their bytes (staged, or moved by a commit
 * that stopped half-way), then their rows, only while still pending. Answers how many went.
 */
export async function sweepReservations<Row extends Reservation>(
  em: EntityManager,
  storage: ObjectStorage,
  entity: EntityClass<Row>,
  pending: FilterQuery<Row>,
  now = new Date(),
): Promise<number> {
  const expired = await em.find(
    entity,
    { $and: [pending, { uploadExpiresAt: { $lt: sweepBefore(now) } }] } as FilterQuery<Row>,
    {
      limit: SWEEP_BATCH,
      orderBy: { uploadExpiresAt: 'asc' } as OrderDefinition<Row>,
    },
  );
  if (!expired.length) return 0;
  await dropUploadBytes(
    storage,
    expired.map((row) => row.storageKey),
  );
  return em.nativeDelete(entity, {
    $and: [pending, { id: { $in: expired.map((row) => row.id) } }],
  } as FilterQuery<Row>);
}

/**
 * Runs `sweep` every `everyMs` in the background until stopped (each service's runtime starts one and
 * stops it on close). The first round waits a full period: a starting process has better things to do.
 */
export function startUploadSweeper(options: {
  name: string;
  logger: Logger;
  sweep: (now: Date) => Promise<number>;
  everyMs?: number;
}): { stop(): Promise<void> } {
  const log = options.logger.child({ component: `${options.name}-upload-sweep` });
  const stopping = new AbortController();
  // Housekeeping, not a request: no trace of its own.
  const loop = untraced(async () => {
    while (!stopping.signal.aborted) {
      await sleep(options.everyMs ?? SWEEP_EVERY_MS, undefined, { signal: stopping.signal }).catch(() => undefined);
      if (stopping.signal.aborted) break;
      try {
        const swept = await options.sweep(new Date());
        if (swept) log.info({ swept }, 'expired upload reservations swept');
      } catch (error) {
        log.error({ err: error }, 'upload sweep failed');
      }
    }
  });
  return {
    stop: async () => {
      stopping.abort();
      await loop;
    },
  };
}

async function readAll(storage: ObjectStorage, key: string): Promise<{ head: Buffer; sha256: string }> {
  const { stream } = await storage.open(key);
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let headBytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk);
    if (headBytes < SIGNATURE_BYTES) {
      head.push(chunk.subarray(0, SIGNATURE_BYTES - headBytes));
      headBytes += head.at(-1)!.length;
    }
  }
  return { head: Buffer.concat(head), sha256: hash.digest('hex') };
}

function tooLarge(field: string, maxBytes: number): AppError {
  return new AppError(ErrorCode.PAYLOAD_TOO_LARGE, `The file is larger than the limit of ${maxBytes} bytes`, {
    fields: [{ field, message: `must be at most ${maxBytes} bytes` }],
  });
}
