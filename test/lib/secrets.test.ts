import { describe, expect, it } from '@jest/globals';
import { constantTimeEqual, deriveKey, randomToken, sha256Hex, signPayload, verifyPayload } from '#lib/secrets.js';

describe('secrets', () => {
  const key = deriveKey(Buffer.alloc(32, 7), 'test');

  it('signs and verifies payloads, rejecting any change', () => {
    const token = signPayload(key, { k: 'a/b', e: 1 });
    expect(verifyPayload(key, token)).toEqual({ k: 'a/b', e: 1 });
    const [body, signature] = token.split('.');
    const forgedBody = Buffer.from(JSON.stringify({ k: 'other', e: 1 })).toString('base64url');
    expect(verifyPayload(key, `${forgedBody}.${signature}`)).toBeNull();
    expect(verifyPayload(key, `${body}.${signature.slice(0, -2)}xx`)).toBeNull();
    expect(verifyPayload(deriveKey(Buffer.alloc(32, 8), 'test'), token)).toBeNull();
    expect(verifyPayload(key, 'garbage')).toBeNull();
  });

  it('derives distinct keys per purpose and hashes and compares safely', () => {
    expect(deriveKey(Buffer.alloc(32, 7), 'a').equals(deriveKey(Buffer.alloc(32, 7), 'b'))).toBe(false);
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(constantTimeEqual('same', 'same')).toBe(true);
    expect(constantTimeEqual('same', 'diff')).toBe(false);
    expect(constantTimeEqual('short', 'longer')).toBe(false);
    expect(randomToken()).not.toBe(randomToken());
    expect(Buffer.from(randomToken(), 'base64url')).toHaveLength(32);
  });
});
