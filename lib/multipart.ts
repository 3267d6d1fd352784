import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { AppError } from './errors.js';

/** One file part as it arrives: its bytes as a stream, never held whole in memory. */
export interface MultipartFile {
  stream: Readable;
  filename: string;
  contentType: string;
}

export interface MultipartOptions<Result> {
  /** The form field carrying the file; other file fields are read and discarded. */
  fileField: string;
  /**
   * Consumes the file stream (e.g. into the storage layer) while the request is still arriving.
   * Fields sent before the file are in `fieldsSoFar`. When it rejects, the rest of the request is
   * drained and `readMultipart` rejects with the same error.
   */
  onFile: (file: MultipartFile, fieldsSoFar: Record<string, string>) => Promise<Result>;
  maxFields?: number;
  maxFieldBytes?: number;
}

export interface MultipartResult<Result> {
  fields: Record<string, string>;
  /** What `onFile` answered, or undefined when the request held no such file. */
  file: Result | undefined;
}

/**
 * Reads a `multipart/form-data` request with busboy, streaming its one file to `onFile`.
 * A request that is not multipart, or not well formed, is a BAD_USER_INPUT naming `fileField`.
 */
export function readMultipart<Result>(req: IncomingMessage, options: MultipartOptions<Result>): Promise<MultipartResult<Result>> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type)) {
    return Promise.reject(AppError.badInput(options.fileField, 'must be sent as multipart/form-data'));
  }
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // Browsers send UTF-8 file names; busboy's default reads them as Latin-1.
        defParamCharset: 'utf8',
        limits: { fields: options.maxFields ?? 20, fieldSize: options.maxFieldBytes ?? 256 * 1024, files: 5, parts: 30 },
      });
    } catch {
      return reject(AppError.badInput(options.fileField, 'the multipart body cannot be read (boundary missing?)'));
    }
    let settled = false;
    let handling: Promise<Result> | undefined;

    // After a failure the client is still sending: read the rest so it can hear the answer.
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      parser.removeAllListeners();
      parser.on('error', () => undefined);
      const answer = () => reject(error instanceof Error ? error : new Error(String(error)));
      if (req.readableEnded) return answer();
      req.on('end', answer);
      req.on('close', answer);
      req.on('error', answer);
      req.resume();
    };

    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) return fail(AppError.badInput(name, 'is too long'));
      fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== options.fileField || handling) {
        stream.resume();
        return;
      }
      handling = options.onFile({ stream, filename: info.filename ?? '', contentType: info.mimeType }, { ...fields });
      handling.catch((error: unknown) => {
        stream.resume();
        fail(error);
      });
    });
    parser.on('fieldsLimit', () => fail(AppError.badInput(options.fileField, 'the form has too many fields')));
    parser.on('partsLimit', () => fail(AppError.badInput(options.fileField, 'the form has too many parts')));
    parser.on('error', () => fail(AppError.badInput(options.fileField, 'the multipart body is not well formed')));
    parser.on('close', () => {
      if (settled) return;
      Promise.resolve(handling).then(
        (file) => {
          if (settled) return;
          settled = true;
          resolve({ fields, file });
        },
        fail,
      );
    });
    req.on('error', (error) => fail(error));
    req.pipe(parser);
  });
}
