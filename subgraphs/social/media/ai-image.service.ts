import { AppError, ErrorCode } from '#lib/errors.js';
import type { Logger } from '#lib/observability/logger.js';
import type { RateLimiter, RateLimitReport } from '#lib/http/rate-limit.js';
import type { Reach } from '../access/reach.js';
import { ImageProviderError, type ImageProvider } from './ai-image.provider.js';
import type { MediaFile } from './media.entity.js';
import type { MediaService } from './media.service.js';

export const PROMPT_MAX = 4000;
export const IMAGE_SIZES = [
  '256x256',
  '512x512',
  '1024x1024',
  '1536x1024',
  '1024x1536',
  '1792x1024',
  '1024x1792',
  'auto',
] as const;
const DEFAULT_SIZE = '1024x1024';

export interface GenerateImageRequest {
  prompt: string;
  size?: string | null;
  brandId?: string | null;
}

/**
 * AI image generation: checks the request, holds each user to the per-minute limit, asks the
 * provider, and keeps the image as a media file in the caller's reach. A provider failure stores nothing.
 */
export class AiImageService {
  constructor(
    private readonly reach: Reach,
    private readonly media: MediaService,
    private readonly provider: ImageProvider | null,
    private readonly limiter: RateLimiter,
    private readonly logger: Logger,
    /** Hears where the caller's image limit stands, for the answer to say. */
    private readonly reportRateLimit?: RateLimitReport,
  ) {}

  async generate(request: GenerateImageRequest): Promise<MediaFile> {
    const prompt = typeof request.prompt === 'string' ? request.prompt.trim() : '';
    if (!prompt) throw AppError.badInput('prompt', 'is required');
    if (prompt.length > PROMPT_MAX) throw AppError.badInput('prompt', `must be at most ${PROMPT_MAX} characters`);
    const size = request.size ?? DEFAULT_SIZE;
    if (!(IMAGE_SIZES as readonly string[]).includes(size))
      throw AppError.badInput('size', `must be one of ${IMAGE_SIZES.join(', ')}`);
    const brandId = await this.media.brandFor(request.brandId);
    if (!this.provider) {
      throw new AppError(
        ErrorCode.SERVICE_UNAVAILABLE,
        'AI image generation is not configured (set AI_IMAGE_API_URL, AI_IMAGE_API_KEY and AI_IMAGE_MODEL)',
      );
    }
    await this.limiter.consume(this.reach.ownerId, 'Too many images generated; try again later', this.reportRateLimit);

    let image;
    try {
      image = await this.provider.generate({ prompt, size });
    } catch (error) {
      if (!(error instanceof ImageProviderError)) throw error;
      this.logger.warn({ reason: error.message }, 'image provider failed');
      throw new AppError(ErrorCode.BAD_GATEWAY, `Image generation failed: ${error.message}`);
    }
    const extension = image.contentType.split('/')[1] ?? 'png';
    return this.media.storeGenerated({
      bytes: image.bytes,
      contentType: image.contentType,
      prompt,
      brandId,
      filename: `generated-${Date.now()}.${extension === 'jpeg' ? 'jpg' : extension}`,
    });
  }
}
