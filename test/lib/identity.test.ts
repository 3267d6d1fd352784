import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { generateKeyPair, SignJWT } from 'jose';
import { loadConfig } from '#lib/config.js';
import { AppError } from '#lib/errors.js';
import { startJwksServer } from '#test/support/jwks.js';
import { Identity, bearerCallerOf, bearerToken, hasScope } from '#lib/identity.js';

describe('identity', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'identity-test-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('signs with the development issuer and keeps its key across restarts', async () => {
    const config = loadConfig({ DATA_DIR: dataDir });
    const token = await (
      await Identity.create(config)
    ).sign({ sub: 'u1', scopes: ['posts.read', 'media.read'], email: 'u1@example.com' });
    const principal = await (await Identity.create(config)).verify(token);
    expect(principal).toMatchObject({ userId: 'u1', email: 'u1@example.com', via: 'bearer' });
    expect(hasScope(principal, 'posts.read')).toBe(true);
    expect(hasScope(principal, 'posts.write')).toBe(false);
  });

  it('gives every scope to a token without a scope claim', async () => {
    const identity = await Identity.create(loadConfig({ DATA_DIR: dataDir }));
    const principal = await identity.verify(await identity.sign({ sub: 'u2' }));
    expect(principal.scopes).toBeNull();
    expect(hasScope(principal, 'anything')).toBe(true);
  });

  it('rejects expired, foreign and malformed tokens as UNAUTHENTICATED', async () => {
    const identity = await Identity.create(loadConfig({ DATA_DIR: dataDir }));
    const expired = await identity.sign({ sub: 'u3' }, '-1m');
    await expect(identity.verify(expired)).rejects.toBeInstanceOf(AppError);
    const { privateKey } = await generateKeyPair('ES256');
    const foreign = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256' })
      .setSubject('u4')
      .setIssuer('urn:platform:dev-issuer')
      .setAudience('platform')
      .setExpirationTime('1h')
      .sign(privateKey);
    await expect(identity.verify(foreign)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(identity.verify('not.a.jwt')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(await bearerCallerOf(identity, 'Bearer opaque-session-token')).toEqual({ principal: null });
    expect(await bearerCallerOf(identity, 'Bearer not.a.jwt')).toMatchObject({
      principal: null,
      refusal: { code: 'UNAUTHENTICATED', extensions: { bearerError: 'invalid_token' } },
    });
    expect(bearerToken('Basic abc')).toBeUndefined();
  });

  it('verifies tokens of an external identity service against its JWKS', async () => {
    const jwks = await startJwksServer('RS256');
    const { privateKey } = jwks;
    try {
      const identity = await Identity.create(
        loadConfig({
          DATA_DIR: dataDir,
          IDENTITY_JWKS_URL: jwks.url,
          IDENTITY_ISSUER: 'https://id.example',
          IDENTITY_AUDIENCE: 'platform-api',
        }),
      );
      expect(identity.canSign).toBe(false);
      const token = await new SignJWT({ scope: 'posts.read' })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject('ext-1')
        .setIssuer('https://id.example')
        .setAudience('platform-api')
        .setExpirationTime('5m')
        .sign(privateKey);
      expect(await identity.verify(token)).toMatchObject({ userId: 'ext-1' });
      // A scope claim that is neither text nor a list grants nothing (not the scope "[object Object]").
      const oddScope = await new SignJWT({ scope: { admin: true } })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject('ext-2')
        .setIssuer('https://id.example')
        .setAudience('platform-api')
        .setExpirationTime('5m')
        .sign(privateKey);
      expect([...((await identity.verify(oddScope)).scopes ?? ['every scope'])]).toEqual([]);
      // The address names the caller only when the identity service does not call it unverified.
      const address = (claims: Record<string, unknown>) =>
        new SignJWT({ email: 'ext@id.example', ...claims })
          .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
          .setSubject('ext-3')
          .setIssuer('https://id.example')
          .setAudience('platform-api')
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(privateKey);
      const verified = await identity.verify(await address({ email_verified: true }));
      expect(verified.email).toBe('ext@id.example');
      expect(verified.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 4 * 60_000);
      expect((await identity.verify(await address({}))).email).toBe('ext@id.example');
      expect(await identity.verify(await address({ email_verified: false }))).toMatchObject({
        userId: 'ext-3',
        email: undefined,
      });
      const wrongAudience = await new SignJWT({})
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject('ext-1')
        .setIssuer('https://id.example')
        .setAudience('other')
        .setExpirationTime('5m')
        .sign(privateKey);
      await expect(identity.verify(wrongAudience)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    } finally {
      jwks.close();
    }
  });
});
