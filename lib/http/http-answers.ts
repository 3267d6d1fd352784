import compression from 'compression';
import type { RequestHandler } from 'express';

/** `Cache-Control` of REST answers, by what they hold. */
export const CACHE_CONTROL = {
  /** Someone's data (contacts, posts, surveys, sessions...): kept by no cache, not even the browser's. */
  personal: 'private, no-store',
  /** The caller's view of shared settings (pipelines): the browser may keep it but revalidates it (ETag) every time. */
  private: 'private, no-cache',
  /** The same for every caller and changed only by a release (`GET /api`): any cache, for 5 minutes. */
  public: 'public, max-age=300',
  /** Health: a fresh answer every time. */
  live: 'no-store',
} as const;

/** Smaller answers gain too little from compression to pay for it. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/** gzip, deflate or br, as the client's `Accept-Encoding` asks, for compressible answers above the threshold. */
export function compressAnswers(): RequestHandler {
  return compression({ threshold: COMPRESSION_THRESHOLD_BYTES });
}
