import { jsonBody, numberParam, type RestRoute } from '#lib/rest/rest.js';
import type { RunOperation } from '#lib/rest/run-operation.js';
import { pageQuery } from '#lib/rest/rest-schemas.js';
import { pageBody } from '#lib/data/pagination.js';
import { mediaPage, mediaUploadInputSchema, uploadGrantSchema, restMedia } from './social.bodies.js';
import { MediaPageDocument, RequestMediaUploadDocument } from './operations.generated.js';

/** `/api/media`: the user's media files, and upload URLs for new ones (bytes go straight to storage). */
export function mediaRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/media',
      summary: 'List media files whose bytes have arrived (page, limit)',
      list: 'pages',
      doc: {
        operationId: 'listMedia',
        tag: 'media',
        query: pageQuery,
        answer: { status: 200, description: 'A page of media files', json: mediaPage },
      },
      handler: async (req, res) => {
        const { mediaPage } = await run(
          MediaPageDocument,
          { page: numberParam(req.query.page), limit: numberParam(req.query.limit) },
          req,
        );
        res.json(pageBody({ ...mediaPage, items: mediaPage.items.map(restMedia) }));
      },
    },
    {
      method: 'post',
      path: '/api/media/upload',
      summary: 'Get an upload URL for a file declared by { filename, contentType, size }',
      doc: {
        operationId: 'createMediaUpload',
        tag: 'media',
        body: mediaUploadInputSchema,
        answer: { status: 200, description: 'Where and how to PUT the bytes', json: uploadGrantSchema },
      },
      handler: async (req, res) => {
        const { requestMediaUpload } = await run(RequestMediaUploadDocument, { input: jsonBody(req) }, req);
        res.json(requestMediaUpload);
      },
    },
  ];
}
