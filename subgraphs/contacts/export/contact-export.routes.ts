import express from 'express';
import type { Orm } from '#lib/data/database.js';
import { ErrorCode, problemFor } from '#lib/errors.js';
import type { Logger } from '#lib/observability/logger.js';
import { readExportGrant, writeContactExport, type ContactExportSettings } from './contact-export.service.js';

/** Where the subgraph serves an export's bytes; the REST adapter reads `${EXPORTS_PATH}/<grant>`. */
export const EXPORTS_PATH = '/exports';

/**
 * The bytes of an export, beside `/graphql`: a million contacts would be a million objects through
 * GraphQL, where here they are one COPY passed on as PostgreSQL sends it. Who may export was decided
 * by the `contactExportGrant` operation (the shield's contacts.export); this route checks only that
 * the grant is one this service signed, unexpired.
 */
export function contactExportStreamRouter(orm: Orm, settings: ContactExportSettings, logger: Logger): express.Router {
  const log = logger.child({ component: 'contacts-export' });
  const router = express.Router();
  router.get(`${EXPORTS_PATH}/:grant`, async (req, res) => {
    const granted = readExportGrant(settings, req.params.grant);
    if (!granted) {
      const problem = problemFor(
        ErrorCode.FORBIDDEN,
        'The export grant is forged, altered or expired: ask for a new one',
      );
      res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
      return;
    }
    res.status(200).set({ 'content-type': 'text/csv; charset=utf-8', 'cache-control': 'no-store' });
    try {
      await writeContactExport(orm, settings, granted.search, res);
    } catch (error) {
      // A client that went away is no fault of the service (the pipeline has ended the COPY).
      if ((error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') return;
      log.error({ err: error, requestId: req.id }, 'contact export failed');
      if (res.headersSent) return void res.destroy();
      const problem = problemFor(ErrorCode.INTERNAL_SERVER_ERROR, 'The export failed; it has been logged');
      res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
    }
  });
  return router;
}
