import { numberParam, type RestRoute, type RunOperation } from '../../lib/rest.js';
import { pageBody, type Page } from '../../lib/pagination.js';
import { pickBody } from './rest.helpers.js';

type MediaFile = Record<string, unknown>;

/** `/api/media`: the user's media files, and upload URLs for new ones (bytes go straight to storage). */
export function mediaRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/media',
      summary: 'List media files whose bytes have arrived (page, limit)',
      handler: async (req, res) => {
        const { mediaPage } = await run<{ mediaPage: Page<MediaFile> }>(
          'MediaPage',
          { page: numberParam(req.query.page), limit: numberParam(req.query.limit) },
          req,
        );
        res.json(pageBody(mediaPage));
      },
    },
    {
      method: 'post',
      path: '/api/media/upload',
      summary: 'Get an upload URL for a file declared by { filename, contentType, size }',
      handler: async (req, res) => {
        const { requestMediaUpload } = await run<{ requestMediaUpload: Record<string, unknown> }>(
          'RequestMediaUpload',
          { input: pickBody(req, ['filename', 'contentType', 'size', 'brandId']) },
          req,
        );
        res.json(requestMediaUpload);
      },
    },
  ];
}
