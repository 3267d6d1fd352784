import type { Config } from '#lib/config.js';

/** An image the provider made: its bytes and what they are. */
export interface GeneratedImage {
  bytes: Buffer;
  contentType: string;
}

/** Anything that turns a prompt into an image; the platform ships the OpenAI-compatible one. */
export interface ImageProvider {
  generate(request: { prompt: string; size: string }): Promise<GeneratedImage>;
}

/** The provider failed or answered something that is not an image; nothing is stored. */
export class ImageProviderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageProviderError';
  }
}

const MAX_IMAGE_BYTES = 25 * 1024 * 1024;

/**
 * The OpenAI images API (`POST {AI_IMAGE_API_URL}/images/generations`), which self-hosted
 * compatible servers speak too. Answers carry the image inline (`b64_json`, what gpt-image-1
 * always sends) or as a short-lived `url` that is fetched at once.
 */
export class OpenAIImageProvider implements ImageProvider {
  constructor(
    private readonly options: {
      baseUrl: string;
      apiKey?: string;
      model: string;
      timeoutMs: number;
      imageHosts?: readonly string[];
    },
  ) {}

  /**
   * Whether an image `url` the provider answered may be fetched: on the provider's own host or one of
   * `AI_IMAGE_URL_HOSTS`, never anywhere the answer names (an internal address, a metadata service).
   */
  private mayFetch(url: string): boolean {
    if (!URL.canParse(url)) return false;
    const target = new URL(url);
    if (!['http:', 'https:'].includes(target.protocol)) return false;
    const allowed = [new URL(this.options.baseUrl).host, ...(this.options.imageHosts ?? [])].map((host) =>
      host.toLowerCase(),
    );
    return allowed.includes(target.host.toLowerCase());
  }

  async generate(request: { prompt: string; size: string }): Promise<GeneratedImage> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    // An inline image is base64 in JSON: a third larger than its bytes, plus a little.
    const answer = await this.call(
      `${this.options.baseUrl.replace(/\/+$/, '')}/images/generations`,
      {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: this.options.model, prompt: request.prompt, size: request.size, n: 1 }),
      },
      MAX_IMAGE_BYTES * 2,
    );
    let body: { data?: Array<{ b64_json?: string; url?: string }> };
    try {
      body = JSON.parse(answer.toString('utf8')) as typeof body;
    } catch {
      throw new ImageProviderError('the image provider answered something that is not JSON');
    }
    const first = body?.data?.[0];
    let bytes: Buffer;
    if (typeof first?.b64_json === 'string' && first.b64_json) bytes = Buffer.from(first.b64_json, 'base64');
    else if (typeof first?.url === 'string' && first.url) {
      if (!this.mayFetch(first.url))
        throw new ImageProviderError(
          'the image provider answered a URL on a host that is not allowed (AI_IMAGE_URL_HOSTS)',
        );
      bytes = await this.call(first.url, { method: 'GET' }, MAX_IMAGE_BYTES);
    } else throw new ImageProviderError('the image provider answered without an image');
    const contentType = sniffImageType(bytes);
    if (!contentType) throw new ImageProviderError('the image provider answered bytes that are not an image');
    return { bytes, contentType };
  }

  /** One call, no redirect followed (it could lead anywhere), its answer read up to `maxBytes` and no further. */
  private async call(url: string, init: RequestInit, maxBytes: number): Promise<Buffer> {
    let response: Response;
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      response = await fetch(url, { ...init, redirect: 'manual', signal });
    } catch (error) {
      const name = (error as { name?: string }).name;
      throw new ImageProviderError(
        name === 'TimeoutError'
          ? 'the image provider did not answer in time'
          : 'the image provider could not be reached',
      );
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      let reason = '';
      try {
        const problem = JSON.parse(text) as { error?: { message?: unknown } } | null;
        reason = typeof problem?.error?.message === 'string' ? problem.error.message : '';
      } catch {
        // not JSON
      }
      throw new ImageProviderError(
        `the image provider answered ${response.status}${reason ? `: ${reason.slice(0, 200)}` : ''}`,
      );
    }
    return readCapped(response, maxBytes);
  }
}

/** The body of `response`, refused as soon as it passes `maxBytes` (whatever Content-Length claimed). */
async function readCapped(response: Response, maxBytes: number): Promise<Buffer> {
  const tooMany = () => new ImageProviderError('the image provider answered more bytes than an image may have');
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooMany();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of response.body ?? []) {
      total += (chunk as Uint8Array).byteLength;
      if (total > maxBytes) throw tooMany();
      chunks.push(Buffer.from(chunk as Uint8Array));
    }
  } catch (error) {
    await response.body?.cancel().catch(() => undefined);
    if (error instanceof ImageProviderError) throw error;
    throw new ImageProviderError(
      (error as { name?: string }).name === 'TimeoutError'
        ? 'the image provider did not answer in time'
        : 'the image provider broke off its answer',
    );
  }
  return Buffer.concat(chunks);
}

/** The type of an image from its first bytes; null when they are no image we store. */
export function sniffImageType(bytes: Buffer): string | null {
  if (bytes.length < 12) return null;
  if (bytes[0] === 0x89 && bytes.subarray(1, 4).toString('latin1') === 'PNG') return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP')
    return 'image/webp';
  if (bytes.subarray(0, 3).toString('latin1') === 'GIF') return 'image/gif';
  return null;
}

/** The configured provider, or null when `AI_IMAGE_API_URL` is unset (generation then answers 503). */
export function imageProviderOf(config: Config): ImageProvider | null {
  if (!config.env.AI_IMAGE_API_URL) return null;
  return new OpenAIImageProvider({
    baseUrl: config.env.AI_IMAGE_API_URL,
    apiKey: config.env.AI_IMAGE_API_KEY,
    model: config.env.AI_IMAGE_MODEL,
    timeoutMs: config.env.AI_IMAGE_TIMEOUT_MS,
    imageHosts: config.env.AI_IMAGE_URL_HOSTS,
  });
}
