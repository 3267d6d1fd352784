import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import type { Config } from './config.js';
import { AppError, ErrorCode } from './errors.js';
import { createFileOnce } from './secrets.js';
import { VerifiedTokens } from './verified-tokens.js';

/** Who is calling: a user, with the scopes the credential carries (`null`: every scope). */
export interface Principal {
  userId: string;
  email?: string;
  scopes: ReadonlySet<string> | null;
  /** How the caller proved who they are; API keys add their id and brand reach. */
  via: 'bearer' | 'api-key' | 'session';
  apiKeyId?: string;
  /** Brand ids an API key may reach; `null` means every brand of the owner (`brand:*`). */
  brandIds?: ReadonlySet<string> | null;
  /** When the credential stops being accepted (a bearer token's `exp`). */
  expiresAt?: Date;
}

export function hasScope(principal: Principal, scope: string): boolean {
  return principal.scopes === null || principal.scopes.has(scope);
}

type SigningKey = Awaited<ReturnType<typeof importJWK>>;

const DEV_ISSUER = 'urn:platform:dev-issuer';
const DEV_AUDIENCE = 'platform';
const ALGORITHM = 'ES256';
/**
 * How far the issuer's clock may run ahead of or behind ours: a token issued a few seconds "in the
 * future" by a slightly fast clock is fine, one issued further ahead would outlive the maximum age.
 */
const CLOCK_TOLERANCE_SECONDS = 30;

interface DevKeyFile {
  privateJwk: JWK;
  publicJwk: JWK;
}

/**
 * Verifies bearer JWTs. With `IDENTITY_JWKS_URL` it trusts that identity service; without it, an
 * embedded development issuer whose key pair is made once and kept under `DATA_DIR`, so tokens
 * printed by `npm run token` stay valid across restarts.
 */
export class Identity {
  private constructor(
    private readonly keys: JWTVerifyGetKey,
    private readonly issuer: string,
    private readonly audience: string,
    private readonly maxTokenAgeSeconds: number,
    private readonly signingKey?: SigningKey,
    private readonly keyId?: string,
  ) {}

  static async create(config: Config): Promise<Identity> {
    const { IDENTITY_JWKS_URL, IDENTITY_ISSUER, IDENTITY_AUDIENCE, IDENTITY_MAX_TOKEN_AGE_SECONDS } = config.env;
    if (IDENTITY_JWKS_URL) {
      return new Identity(
        createRemoteJWKSet(new URL(IDENTITY_JWKS_URL)),
        IDENTITY_ISSUER!,
        IDENTITY_AUDIENCE!,
        IDENTITY_MAX_TOKEN_AGE_SECONDS,
      );
    }
    const keys = await loadOrCreateDevKeys(config.dataDir);
    const signingKey = await importJWK(keys.privateJwk, ALGORITHM);
    return new Identity(
      createLocalJWKSet({ keys: [keys.publicJwk] }),
      DEV_ISSUER,
      DEV_AUDIENCE,
      IDENTITY_MAX_TOKEN_AGE_SECONDS,
      signingKey,
      keys.publicJwk.kid,
    );
  }

  get canSign(): boolean {
    return this.signingKey !== undefined;
  }

  /** Signs a token with the development issuer (the `npm run token` command and tests). */
  async sign(claims: { sub: string; scopes?: string[]; email?: string }, expiresIn = '12h'): Promise<string> {
    if (!this.signingKey) throw new Error('tokens are issued by the identity service at IDENTITY_JWKS_URL');
    const payload: Record<string, unknown> = {};
    if (claims.scopes) payload.scope = claims.scopes.join(' ');
    if (claims.email) payload.email = claims.email;
    return new SignJWT(payload)
      .setProtectedHeader({ alg: ALGORITHM, kid: this.keyId })
      .setSubject(claims.sub)
      .setIssuer(this.issuer)
      .setAudience(this.audience)
      .setIssuedAt()
      .setExpirationTime(expiresIn)
      .sign(this.signingKey);
  }

  private readonly verified = new VerifiedTokens<Principal>();

  async verify(token: string): Promise<Principal> {
    const remembered = this.verified.recall(token);
    if (remembered) return remembered;
    try {
      // Read unverified only to pick the age check; jwtVerify below checks the signature of the same bytes.
      const hasIssuedAt = decodeJwt(token).iat !== undefined;
      const { payload } = await jwtVerify(token, this.keys, {
        issuer: this.issuer,
        audience: this.audience,
        algorithms: ['RS256', 'ES256'],
        // A token that never expires is a stolen token's best friend.
        requiredClaims: ['exp'],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        // jose refuses an `iat` older than this, and one in the future (beyond the tolerance).
        maxTokenAge: hasIssuedAt ? this.maxTokenAgeSeconds : undefined,
      });
      if (!payload.sub) throw new Error('token has no subject');
      if (!hasIssuedAt && outlivesMaxAge(payload, this.maxTokenAgeSeconds))
        throw new Error('token without iat outlives the maximum age');
      const scope = payload.scope ?? payload.scp;
      // A claim of another shape than text or a list grants nothing.
      const scopes =
        scope === undefined
          ? null
          : new Set(
              Array.isArray(scope)
                ? scope.map(String)
                : typeof scope === 'string'
                  ? scope.split(/[\s,]+/).filter(Boolean)
                  : [],
            );
      const principal: Principal = {
        userId: payload.sub,
        // An address the identity service itself calls unverified could be anybody's: it names nobody here.
        email: typeof payload.email === 'string' && payload.email_verified !== false ? payload.email : undefined,
        scopes,
        via: 'bearer',
        expiresAt: new Date(payload.exp! * 1000),
      };
      const tooOld = hasIssuedAt ? (payload.iat! + this.maxTokenAgeSeconds) * 1000 : Infinity;
      this.verified.remember(token, principal, Math.min(principal.expiresAt!.getTime(), tooOld));
      return principal;
    } catch {
      throw new AppError(ErrorCode.UNAUTHENTICATED, 'The bearer token is invalid or expired');
    }
  }
}

/** A token without `iat` cannot show its age: it is refused when it would stay valid longer than the maximum. */
function outlivesMaxAge(payload: JWTPayload, maxAgeSeconds: number): boolean {
  return payload.exp! - Math.floor(Date.now() / 1000) > maxAgeSeconds;
}

async function loadOrCreateDevKeys(dataDir: string): Promise<DevKeyFile> {
  const file = path.join(dataDir, 'identity', 'dev-issuer.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as DevKeyFile;
  const { privateKey, publicKey } = await generateKeyPair(ALGORITHM, { extractable: true });
  const kid = `dev-${Date.now().toString(36)}`;
  const keys: DevKeyFile = {
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: ALGORITHM },
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg: ALGORITHM, use: 'sig' },
  };
  // If another process made the file first, use theirs so both agree on the key; never a half-written one.
  createFileOnce(file, JSON.stringify(keys));
  return JSON.parse(readFileSync(file, 'utf8')) as DevKeyFile;
}

/** The bearer credential of a request, if any. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match?.[1];
}

/**
 * The extension in which a subgraph's UNAUTHENTICATED error says why a bearer token that was sent
 * was refused (RFC 6750's `error`, `invalid_token`): the REST adapters answer it in `WWW-Authenticate`.
 */
export const BEARER_ERROR_EXTENSION = 'bearerError';

/** The refusal of a bearer token that was sent and is not valid (expired, bad signature, unknown session). */
export function invalidTokenRefusal(): AppError {
  return new AppError(ErrorCode.UNAUTHENTICATED, 'Authentication required', {
    details: { [BEARER_ERROR_EXTENSION]: 'invalid_token' },
  });
}

/**
 * The caller a bearer JWT names, or null without one (a surveys session token sent along to another
 * subgraph is not a JWT and is not an error). A JWT that was sent and is not valid names nobody
 * either, and gives the `refusal` the shield answers wherever a caller is required (`invalidTokenRefusal`).
 */
export async function bearerCallerOf(
  identity: Identity,
  authorization: string | undefined,
): Promise<{ principal: Principal | null; refusal?: AppError }> {
  const token = bearerToken(authorization);
  if (!token || token.split('.').length !== 3) return { principal: null };
  try {
    return { principal: await identity.verify(token) };
  } catch {
    return { principal: null, refusal: invalidTokenRefusal() };
  }
}
