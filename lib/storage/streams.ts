import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { AppError, ErrorCode } from '../errors.js';
import type { WrittenObject } from './storage.js';

/** Counts bytes and hashes them on the way through; errors past the limit. */
export function meter(maxBytes: number) {
  const hash = createHash('sha256');
  let size = 0;
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > maxBytes)
        return callback(new AppError(ErrorCode.PAYLOAD_TOO_LARGE, `The file is larger than ${maxBytes} bytes`));
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  return { transform, result: (): WrittenObject => ({ size, sha256: hash.digest('hex') }) };
}

/** The first `bytes` bytes of a stream, which is closed as soon as they are in. */
export async function readStart(stream: Readable, bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    read += chunk.length;
    if (read >= bytes) break;
  }
  stream.destroy();
  return Buffer.concat(chunks).subarray(0, bytes);
}

export async function sha256OfStream(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
