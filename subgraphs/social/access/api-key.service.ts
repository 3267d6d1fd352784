import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import { hasScope, type Principal } from '#lib/identity.js';
import { isUuid } from '#lib/ids.js';
import { constantTimeEqual, randomToken, sha256Hex } from '#lib/secrets.js';
import { ApiKey } from './api-key.entity.js';
import type { CreateApiKeyInput } from './api-key.input.js';
import { Brand } from './brand.entity.js';
import type { Reach } from './reach.js';
import { isSocialScope } from './scopes.js';

const KEY_PREFIX = 'sk_';
/** last_used_at is a hint for people, not an audit trail; writing it at most once a minute keeps hot keys cheap. */
const LAST_USED_PRECISION_MS = 60_000;

/**
 * API keys of the caller: made with a bearer token only (never with another key), shown once,
 * stored as SHA-256, each with a subset of the scopes and a brand reach.
 */
export class ApiKeyService {
  constructor(
    private readonly em: EntityManager,
    private readonly reach: Reach,
  ) {}

  /** The caller, who must have signed in with a bearer token to manage keys. */
  private bearer(refusal: string): Principal {
    const principal = this.reach.caller;
    if (principal.via !== 'bearer') throw new AppError(ErrorCode.FORBIDDEN, refusal);
    return principal;
  }

  async create(input: CreateApiKeyInput): Promise<{ key: string; apiKey: ApiKey }> {
    const principal = this.bearer('API keys are made with a bearer token, not with another key');
    const name = input.name?.trim();
    if (!name) throw AppError.badInput('name', 'is required');
    const scopes = new Set<string>();
    const brandIds = new Set((input.brandIds ?? []).map((id) => id.trim().toLowerCase()));
    let everyBrand = false;
    for (const raw of input.scopes ?? []) {
      const scope = raw.trim();
      if (scope === 'brand:*') everyBrand = true;
      else if (scope.startsWith('brand:')) brandIds.add(scope.slice('brand:'.length).toLowerCase());
      else if (isSocialScope(scope)) scopes.add(scope);
      else throw AppError.badInput('scopes', `${scope} is not a scope of this service`);
    }
    if (!scopes.size) throw AppError.badInput('scopes', 'must name at least one scope');
    const beyond = [...scopes].filter((scope) => !hasScope(principal, scope));
    if (beyond.length)
      throw new AppError(ErrorCode.FORBIDDEN, `Your token does not hold ${beyond.join(', ')}, so a key cannot either`);
    if ([...brandIds].some((id) => !isUuid(id))) throw AppError.badInput('brandIds', 'must be brand ids');
    if (brandIds.size) {
      const owned = await this.em.count(Brand, { id: { $in: [...brandIds] }, ownerId: principal.userId });
      if (owned !== brandIds.size) throw AppError.badInput('brandIds', 'must all be your brands');
    }
    const key = `${KEY_PREFIX}${randomToken(32)}`;
    const apiKey = new ApiKey();
    apiKey.ownerId = principal.userId;
    apiKey.name = name;
    apiKey.keyHash = sha256Hex(key);
    apiKey.prefix = key.slice(0, KEY_PREFIX.length + 6);
    apiKey.scopes = [...scopes].sort();
    apiKey.brandIds = everyBrand || !brandIds.size ? null : [...brandIds].sort();
    await this.em.persist(apiKey).flush();
    return { key, apiKey };
  }

  async list(): Promise<ApiKey[]> {
    const principal = this.bearer('API keys are listed with a bearer token');
    return this.em.find(ApiKey, { ownerId: principal.userId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  }

  async revoke(id: string): Promise<ApiKey> {
    const principal = this.bearer('API keys are revoked with a bearer token');
    const apiKey = isUuid(id) ? await this.em.findOne(ApiKey, { id, ownerId: principal.userId }) : null;
    if (!apiKey) throw AppError.notFound('API key');
    if (!apiKey.revokedAt) {
      apiKey.revokedAt = new Date();
      await this.em.flush();
    }
    return apiKey;
  }
}

/** The principal a presented key stands for, or null when it is unknown or revoked. */
export async function authenticateApiKey(em: EntityManager, presented: string): Promise<Principal | null> {
  if (!presented.startsWith(KEY_PREFIX) || presented.length > 128) return null;
  const hash = sha256Hex(presented);
  const apiKey = await em.findOne(ApiKey, { keyHash: hash, revokedAt: null });
  // The lookup is by hash; comparing again in constant time costs nothing and leaves no timing hint.
  if (!apiKey || !constantTimeEqual(apiKey.keyHash, hash)) return null;
  const now = Date.now();
  if (!apiKey.lastUsedAt || now - apiKey.lastUsedAt.getTime() >= LAST_USED_PRECISION_MS) {
    await em.nativeUpdate(ApiKey, { id: apiKey.id }, { lastUsedAt: new Date(now) });
  }
  return {
    userId: apiKey.ownerId,
    scopes: new Set(apiKey.scopes),
    via: 'api-key',
    apiKeyId: apiKey.id,
    brandIds: apiKey.brandIds ? new Set(apiKey.brandIds) : null,
  };
}
