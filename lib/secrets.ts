import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';

/**
 * The platform's 32-byte secret: `ENCRYPTION_KEY` when set, else one generated once and kept under
 * `DATA_DIR`, so signed URLs and encrypted tokens survive restarts. Purpose-specific keys are
 * derived from it, so one leaked use does not reveal another.
 */
export function masterKey(config: Config): Buffer {
  if (config.env.ENCRYPTION_KEY) return Buffer.from(config.env.ENCRYPTION_KEY, 'base64');
  const file = path.join(config.dataDir, 'secrets', 'master.key');
  createFileOnce(file, randomBytes(32).toString('base64'));
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32)
    throw new Error(`${file} does not hold 32 bytes (base64); restore it from a backup or set ENCRYPTION_KEY`);
  return key;
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

/** Signs a small JSON payload into `payload.signature` (base64url), verifiable with the same key. */
export function signPayload(key: Buffer, payload: object): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
}

/** The payload of a token made by `signPayload`, or null when it was forged or altered. */
export function verifyPayload<T>(key: Buffer, token: string): T | null {
  const [body, signature, extra] = token.split('.');
  if (!body || !signature || extra !== undefined) return null;
  const expected = createHmac('sha256', key).update(body).digest('base64url');
  if (!constantTimeEqual(signature, expected)) return null;
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString()) as T;
  } catch {
    return null;
  }
}
