import type DataLoader from 'dataloader';
import type { AuthContext } from '#lib/subgraph/shield.js';
import type { ApiKeyService } from './api-key.service.js';
import type { Brand } from './brand.entity.js';
import type { BrandService } from './brand.service.js';

/** What the access resolvers use of a request's context (social.context.ts makes it). */
export interface AccessContext extends AuthContext {
  brands: BrandService;
  apiKeys: ApiKeyService;
  brandById: DataLoader<string, Brand | null>;
}
