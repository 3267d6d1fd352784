import http from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { ErrorCode, problemFor } from '#lib/errors.js';
import { SUBGRAPH_TOKEN_HEADER } from '#lib/http/subgraph-token.js';
import { REQUEST_ID_HEADER, requestIdOf } from '#lib/observability/logger.js';
import { ProblemError, type RunOperation } from '#lib/rest/run-operation.js';
import { stringParam, type RestRoute } from '#lib/rest/rest.js';
import { contentDisposition } from '#lib/http/content-disposition.js';
import { ContactExportGrantDocument } from './operations.generated.js';

/** The columns of the file, as the contacts subgraph writes them (subgraphs/contacts/export/contact-export.service.ts). */
const EXPORT_COLUMNS = 'id, firstName, lastName, email, phone, company, tags, createdAt, updatedAt';

/**
 * Reads the bytes of the export a grant names from the contacts subgraph: in process when it runs in
 * this one, over HTTP (`GET /exports/<grant>` on its port) when it is deployed apart; the route sees
 * no difference, as with the GraphQL client. Rejects with a problem when the subgraph refuses.
 */
export interface ExportReader {
  open(grant: string, requestId: string): Promise<Readable>;
}

/**
 * The contacts subgraph of this process, read without HTTP (`read` answers null for a refused grant),
 * as the gateway executes a subgraph of its own process in it: the socket hop cost about a fifth of
 * an export's time.
 */
export function inProcessExports(read: (grant: string) => Readable | null): ExportReader {
  return {
    open: (grant) => {
      const stream = read(grant);
      return stream ? Promise.resolve(stream) : Promise.reject(refusal(403));
    },
  };
}

/**
 * The contacts subgraph at `subgraphUrl` (its GraphQL URL, CONTACTS_SUBGRAPH_URL; `/exports` is beside
 * it), sent SUBGRAPH_TOKEN as the gateway sends it. Its answer, once it has said 200; anything else is a 502 problem.
 */
export function httpExports(subgraphUrl: string | undefined, subgraphToken: string | undefined): ExportReader {
  return {
    open: (grant, requestId) => {
      if (!subgraphUrl) {
        return Promise.reject(
          new ProblemError(
            problemFor(
              ErrorCode.SERVICE_UNAVAILABLE,
              'Exports need CONTACTS_SUBGRAPH_URL: the contacts subgraph is not known here',
            ),
          ),
        );
      }
      const url = new URL(`/exports/${encodeURIComponent(grant)}`, subgraphUrl);
      return new Promise((resolve, reject) => {
        const request = http.get(
          url,
          {
            headers: {
              [REQUEST_ID_HEADER]: requestId,
              ...(subgraphToken ? { [SUBGRAPH_TOKEN_HEADER]: subgraphToken } : {}),
            },
          },
          (response) => {
            if (response.statusCode === 200) return resolve(response);
            response.resume();
            reject(refusal(response.statusCode));
          },
        );
        // The socket error names internal addresses and ports: it goes to the log line of the 502
        // (its cause), and the client hears only that the upstream failed.
        request.on('error', (error) =>
          reject(
            new ProblemError(
              problemFor(ErrorCode.BAD_GATEWAY, 'The contacts service could not be reached for the export'),
              {},
              { cause: error },
            ),
          ),
        );
      });
    },
  };
}

/**
 * CSV export. The operation decides who may export (the contacts.export scope) and answers a signed
 * grant for this one export, valid a minute; the bytes then come from the subgraph's port as
 * PostgreSQL's COPY sends them and are passed on as they come: the client's pace holds the COPY
 * (backpressure both ways), and a client that goes away ends it. Memory stays flat at any size.
 */
export function contactExportRoutes(run: RunOperation, exports: ExportReader): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/contacts/export',
      summary: 'Export contacts as CSV (optional search)',
      doc: {
        operationId: 'exportContacts',
        tag: 'contacts',
        query: z.object({
          search: z.string().optional().meta({ description: 'Export only the contacts this full-text search finds' }),
        }),
        answer: {
          status: 200,
          description: `CSV with a header row: ${EXPORT_COLUMNS} (tags joined with ;)`,
          content: { 'text/csv': z.string() },
        },
      },
      handler: async (req, res) => {
        // Asked before any byte is sent, so a refused or bad request still gets a problem body.
        const { contactExportGrant } = await run(
          ContactExportGrantDocument,
          { search: stringParam(req.query.search) },
          req,
        );
        const upstream = await exports.open(contactExportGrant.grant, requestIdOf(req));
        res.status(200).set({
          'content-type': 'text/csv; charset=utf-8',
          'content-disposition': contentDisposition('contacts.csv'),
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        });
        // Either end closing destroys the other: the subgraph then drops its COPY's connection.
        await pipeline(upstream, res);
      },
    },
  ];
}

/** The subgraph refused a grant its own operation just handed out (expired on the way, keys that differ): a 502 problem. */
function refusal(status: number | undefined): ProblemError {
  return new ProblemError(problemFor(ErrorCode.BAD_GATEWAY, `The contacts service refused the export (${status})`));
}
