import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { listItems, type Config } from './config.js';

/**
 * Keys of one use, newest first: the first seals and signs, every one of them opens and verifies. A
 * key is rotated without downtime by putting the new one first while the old one stays listed (every
 * instance then reads what any other wrote), running `npm run rekey`, and dropping the old one later.
 */
export type KeyRing = readonly [Buffer, ...Buffer[]];

/** One key, or a ring of them; a single key is a ring of one. */
export type Keys = Buffer | KeyRing;

export function ringOf(keys: Keys): KeyRing {
  return Buffer.isBuffer(keys) ? [keys] : keys;
}

/**
 * The platform's 32-byte secrets, newest first: `ENCRYPTION_KEY`'s comma list when set, else one key
 * generated once and kept under `DATA_DIR`, so signed URLs and encrypted tokens survive restarts.
 * Purpose-specific keys are derived from them, so one leaked use does not reveal another.
 */
export function masterKeys(config: Config): KeyRing {
  const listed = listItems(config.env.ENCRYPTION_KEY).map((key) => Buffer.from(key, 'base64'));
  if (listed.length) return listed as unknown as KeyRing;
  const file = path.join(config.dataDir, 'secrets', 'master.key');
  createFileOnce(file, randomBytes(32).toString('base64'));
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32)
    throw new Error(`${file} does not hold 32 bytes (base64); restore it from a backup or set ENCRYPTION_KEY`);
  return [key];
}

/** The key that seals and signs now: the first of `masterKeys`. */
export function masterKey(config: Config): Buffer {
  return masterKeys(config)[0];
}

/**
 * Creates `file` with `content` unless it exists, so that no reader ever sees it half written: the
 * content goes to a temporary file first, which is then linked into place. A link is atomic and fails
 * when the name is taken, so when several processes start at once, one wins and the others use its file.
 */
export function createFileOnce(file: string, content: string): void {
  if (existsSync(file)) return;
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temporary, content, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // another process made it first; use theirs
  } finally {
    rmSync(temporary, { force: true });
  }
}

export function deriveKey(master: Buffer, purpose: string): Buffer {
  return createHmac('sha256', master).update(`platform:${purpose}`).digest();
}

/** The keys of one purpose derived from each master key, in the same order. */
export function deriveKeys(masters: KeyRing, purpose: string): KeyRing {
  return masters.map((master) => deriveKey(master, purpose)) as unknown as KeyRing;
}

/** SHA-256 hex of a secret, for storing tokens and keys we only ever compare. */
export function sha256Hex(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Compares two strings in time that does not depend on where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A random token for URLs and headers (base64url). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Signs a small JSON payload into `payload.signature` (base64url) with the first key, verifiable with any of them. */
export function signPayload(keys: Keys, payload: object): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${createHmac('sha256', ringOf(keys)[0]).update(body).digest('base64url')}`;
}

/** The payload of a token made by `signPayload` with any of `keys`, or null when it was forged or altered. */
export function verifyPayload<T>(keys: Keys, token: string): T | null {
  const [body, signature, extra] = token.split('.');
  if (!body || !signature || extra !== undefined) return null;
  const signedByOne = ringOf(keys).some((key) =>
    constantTimeEqual(signature, createHmac('sha256', key).update(body).digest('base64url')),
  );
  if (!signedByOne) return null;
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString()) as T;
  } catch {
    return null;
  }
}
