import type { RestRoute, RunOperation } from '../../lib/rest.js';
import { pickBody } from './rest.helpers.js';

/** `/api/ai`: image generation; the image is kept as a media file and answered as one. */
export function aiRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'post',
      path: '/api/ai/generate-image',
      summary: 'Generate an image from { prompt, size?, brandId? } and store it as a media file',
      handler: async (req, res) => {
        const { generateImage } = await run<{ generateImage: Record<string, unknown> }>('GenerateImage', { input: pickBody(req, ['prompt', 'size', 'brandId']) }, req);
        res.json(generateImage);
      },
    },
  ];
}
