import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Config } from '#lib/config.js';
import { deriveKeys, masterKeys, ringOf, type KeyRing, type Keys } from '#lib/secrets.js';

const VERSION = 'v1';

/**
 * Platform tokens at rest: AES-256-GCM under a key derived from the platform secret
 * (`ENCRYPTION_KEY`, or the key generated under DATA_DIR). Each value is bound to what it belongs
 * to (its `context`, e.g. the integration id) as associated data, so a ciphertext copied onto
 * another row does not decrypt. The first key seals; any key of the ring opens (rotation, lib/secrets.ts).
 */
export class TokenCipher {
  private readonly keys: KeyRing;

  constructor(keys: Keys) {
    this.keys = ringOf(keys);
    if (this.keys.some((key) => key.length !== 32)) throw new Error('the token key must be 32 bytes');
  }

  static fromConfig(config: Config): TokenCipher {
    return new TokenCipher(deriveKeys(masterKeys(config), 'platform-tokens'));
  }

  seal(plain: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys[0], iv);
    cipher.setAAD(Buffer.from(context));
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}.${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${sealed.toString('base64url')}`;
  }

  /**
   * The plain value, opened with whichever key sealed it. `owner` names what it belongs to in the
   * error when no key opens it (sealed under a key no longer in ENCRYPTION_KEY, or for another context).
   */
  open(sealed: string, context: string, owner = context): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('not a sealed token');
    for (const key of this.keys) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(context));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        // sealed with another key of the ring, or none
      }
    }
    throw new UnopenableSealedValue(owner);
  }
}

/** A sealed value no key of ENCRYPTION_KEY opens: what it belongs to must be set again (an integration reconnected). */
export class UnopenableSealedValue extends Error {
  constructor(readonly owner: string) {
    super(
      `the sealed secret of ${owner} opens with none of the keys in ENCRYPTION_KEY (sealed under a key no longer listed); ` +
        'put that key back in the list, or set the secret again (reconnect the integration, make a new webhook secret)',
    );
    this.name = 'UnopenableSealedValue';
  }
}
