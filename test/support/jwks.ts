import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type CryptoKey } from 'jose';

/** A local identity service's JWKS endpoint (`/jwks`) serving one fresh key pair's public key, `kid` k1. */
export async function startJwksServer(
  algorithm: 'RS256' | 'ES256',
): Promise<{ privateKey: CryptoKey; url: string; close(): void }> {
  const { privateKey, publicKey } = await generateKeyPair(algorithm);
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: algorithm };
  const server = createServer((_req, res) =>
    res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    privateKey,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
    close: () => server.close(),
  };
}
