import http from 'node:http';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The bytes as they came over the wire (still compressed, if they were). */
  body: Buffer;
}

/**
 * One HTTP request with exactly the headers given (`fetch` adds its own Accept-Encoding and
 * decompresses; tests of CORS and compression need the wire as a browser or client sees it).
 */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method ?? 'GET', headers: options.headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

/** The `Access-Control-*` headers of an answer, by name. */
export function corsHeaders(answer: RawAnswer): Record<string, string | string[] | undefined> {
  return Object.fromEntries(Object.entries(answer.headers).filter(([name]) => name.startsWith('access-control-')));
}
