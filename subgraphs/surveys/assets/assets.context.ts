import type { AssetService } from './asset.service.js';

/** What the asset resolvers use of a request's context (surveys.context.ts makes it). */
export interface AssetsContext {
  /** Bound to the surveyor, as the surveys are. */
  assets: AssetService;
}
