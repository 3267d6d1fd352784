import { pipeline } from 'node:stream/promises';
import express, { type Request, type Response, type Router } from 'express';
import type { Config } from '../config.js';
import { corsFor } from '../http/cors.js';
import { contentDisposition } from '../http/content-disposition.js';
import { AppError, ErrorCode } from '../errors.js';
import { FileStorage } from './file-storage.js';
import type { ObjectStorage } from './storage.js';

/**
 * Routes that serve the signed URLs of the local file store (`PUT` and `GET /storage/:token`),
 * mounted by each REST service that hands such URLs out. The PUT must carry the declared
 * content type and exactly the declared size, and never overwrites an object that exists. Upload
 * URLs write staging keys (`lib/storage/uploads.ts`); once the commit moved the bytes into place, the URL
 * takes nothing more.
 */
export function storageRouter(storage: ObjectStorage, config: Pick<Config, 'corsOrigins'>): Router {
  const router = express.Router();
  if (!(storage instanceof FileStorage)) return router;
  // A page uploads to and shows from its signed URLs directly, as it would with S3's (whose bucket has CORS rules of its own).
  router.all('/storage/:token', corsFor(config, ['GET', 'HEAD', 'PUT']));

  router.put('/storage/:token', async (req: Request, res: Response) => {
    const grant = storage.verify(String(req.params.token), 'PUT');
    const sentType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (grant.ct && sentType !== grant.ct.toLowerCase()) {
      throw AppError.badInput('content-type', `must be ${grant.ct}, as declared`);
    }
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (grant.n !== undefined && Number.isFinite(declared) && declared !== grant.n) {
      throw AppError.badInput('content-length', `must be ${grant.n} bytes, as declared`);
    }
    if ((await storage.size(grant.k)) !== null)
      throw new AppError(ErrorCode.CONFLICT, 'This upload has already been made');
    // Committed: the bytes were checked and moved into place, and this URL takes nothing more.
    if (grant.f && (await storage.size(grant.f)) !== null)
      throw new AppError(ErrorCode.CONFLICT, 'This upload has already been committed');
    const written = await storage.put(grant.k, req, {
      contentType: grant.ct ?? 'application/octet-stream',
      maxBytes: grant.n ?? Infinity,
      exclusive: true,
    });
    if (grant.n !== undefined && written.size !== grant.n) {
      await storage.delete(grant.k);
      throw AppError.badInput('body', `has ${written.size} bytes; ${grant.n} were declared`);
    }
    res.status(200).json({ size: written.size, sha256: written.sha256 });
  });

  router.get('/storage/:token', async (req: Request, res: Response) => {
    const grant = storage.verify(String(req.params.token), 'GET');
    const { stream, size } = await storage.open(grant.k);
    res.set({
      'content-type': grant.ct ?? 'application/octet-stream',
      'content-length': String(size),
      'x-content-type-options': 'nosniff',
      'cache-control': 'private, max-age=300',
      ...(grant.fn ? { 'content-disposition': contentDisposition(grant.fn, 'inline') } : {}),
    });
    await pipeline(stream, res);
  });
  return router;
}
