import { jsonBody, type RestRoute } from '#lib/rest/rest.js';
import type { RunOperation } from '#lib/rest/run-operation.js';
import { generateImageSchema, mediaFileSchema, restMedia } from './social.bodies.js';
import { GenerateImageDocument } from './operations.generated.js';

/** `/api/ai`: image generation; the image is kept as a media file and answered as one. */
export function aiRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'post',
      path: '/api/ai/generate-image',
      rateLimit: 'subgraph',
      summary: 'Generate an image from { prompt, size?, brandId? } and store it as a media file',
      doc: {
        operationId: 'generateImage',
        tag: 'ai',
        body: generateImageSchema,
        answer: { status: 200, description: 'The stored image', json: mediaFileSchema },
        // 429 over AI_IMAGE_RATE_LIMIT a minute; 503 while AI_IMAGE_API_URL is unset; 502 when the image API fails.
        problems: [429, 502, 503],
      },
      handler: async (req, res) => {
        const { generateImage } = await run(GenerateImageDocument, { input: jsonBody(req) }, req);
        res.json(restMedia(generateImage));
      },
    },
  ];
}
