import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Config } from '#lib/config.js';
import { deriveKey, masterKey } from '#lib/secrets.js';

const VERSION = 'v1';

/**
 * Platform tokens at rest: AES-256-GCM under a key derived from the platform secret
 * (`ENCRYPTION_KEY`, or the key generated under DATA_DIR). Each value is bound to what it belongs
 * to (its `context`, e.g. the integration id) as associated data, so a ciphertext copied onto
 * another row does not decrypt.
 */
export class TokenCipher {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the token key must be 32 bytes');
  }

  static fromConfig(config: Config): TokenCipher {
    return new TokenCipher(deriveKey(masterKey(config), 'platform-tokens'));
  }

  seal(plain: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}.${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${sealed.toString('base64url')}`;
  }

  open(sealed: string, context: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('not a sealed token');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
