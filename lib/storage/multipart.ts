import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { AppError } from '../errors.js';
import { unstorable } from '../http/input.js';

/** One file part as it arrives: its bytes as a stream, never held whole in memory. */
export interface MultipartFile {
  stream: Readable;
  filename: string;
  contentType: string;
}

export interface MultipartOptions<Result> {
  /** The form field carrying the one file; a second file, in it or in any other field, is a 400. */
  fileField: string;
  /**
   * Consumes the file stream (e.g. into the storage layer) while the request is still arriving.
   * Fields sent before the file are in `fieldsSoFar`. When it rejects, the rest of the request is
   * drained and `readMultipart` rejects with the same error.
   */
  onFile: (file: MultipartFile, fieldsSoFar: Record<string, string>) => Promise<Result>;
  /**
   * Undoes what `onFile` kept (e.g. deletes the stored object) when the request fails after
   * `onFile` succeeded: a second file, a body cut short after the file. Nothing of a failed
   * request is kept.
   */
  discard?: (result: Result) => Promise<void>;
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
 * A request that is not multipart, or not well formed (cut short, wrong boundary, empty), is a
 * BAD_USER_INPUT naming `fileField`, and whatever `onFile` stored of it is discarded.
 *
 * Every stream here has its `error` handled from the moment it exists: busboy errors a file
 * stream whose body ends early, and an unhandled stream error would end the whole process.
 */
export function readMultipart<Result>(
  req: IncomingMessage,
  options: MultipartOptions<Result>,
): Promise<MultipartResult<Result>> {
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
        limits: {
          fields: options.maxFields ?? 20,
          fieldSize: options.maxFieldBytes ?? 256 * 1024,
          files: 2,
          parts: 30,
        },
      });
    } catch {
      return reject(AppError.badInput(options.fileField, 'the multipart body cannot be read (boundary missing?)'));
    }
    let settled = false;
    let handling: Promise<Result> | undefined;
    let fileStream: Readable | undefined;

    /** What `onFile` kept, undone; then the failure is answered. */
    const discardThenReject = async (error: unknown) => {
      const kept = handling
        ? await handling.then(
            (result) => ({ result }),
            () => undefined,
          )
        : undefined;
      if (kept && options.discard) await options.discard(kept.result).catch(() => undefined);
      reject(error instanceof Error ? error : new Error(String(error)));
    };

    // After a failure the client may still be sending: read the rest so it can hear the answer.
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      parser.removeAllListeners();
      parser.on('error', () => undefined);
      // Whatever is still writing the file stops (and removes its partial object).
      if (fileStream && !fileStream.readableEnded) fileStream.destroy(error instanceof Error ? error : undefined);
      let answered = false;
      const answer = () => {
        if (answered) return;
        answered = true;
        void discardThenReject(error);
      };
      if (req.readableEnded || req.destroyed) return answer();
      req.on('end', answer);
      req.on('close', answer);
      req.on('error', answer);
      req.resume();
    };

    const malformed = () =>
      AppError.badInput(
        options.fileField,
        'the multipart body is not well formed (cut short, or not matching its boundary)',
      );
    // The consumer of the file sees busboy's own error when the body breaks off: that is the client's fault.
    const clientFault = (error: unknown) => (isBrokenBody(error) ? malformed() : error);

    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) return fail(AppError.badInput(name, 'is too long'));
      const why = unstorable(value);
      if (why) return fail(AppError.badInput(name, why));
      fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      // Handled at once: busboy errors this stream when the body ends before the file does, maybe
      // while `onFile` is still awaiting something else; unhandled, that error would end the process.
      stream.on('error', (error) => {
        if (isBrokenBody(error)) fail(malformed());
      });
      if (name !== options.fileField || handling) {
        stream.resume();
        return fail(
          AppError.badInput(
            options.fileField,
            `the form must hold exactly one file, in field "${options.fileField}"; it holds another in "${name}"`,
          ),
        );
      }
      const badName = unstorable(info.filename ?? '');
      if (badName) {
        stream.resume();
        return fail(AppError.badInput(options.fileField, `its file name ${badName}`));
      }
      fileStream = stream;
      handling = options.onFile({ stream, filename: info.filename ?? '', contentType: info.mimeType }, { ...fields });
      handling.catch((error: unknown) => {
        stream.resume();
        fail(clientFault(error));
      });
    });
    parser.on('filesLimit', () =>
      fail(
        AppError.badInput(options.fileField, `the form must hold exactly one file, in field "${options.fileField}"`),
      ),
    );
    parser.on('fieldsLimit', () => fail(AppError.badInput(options.fileField, 'the form has too many fields')));
    parser.on('partsLimit', () => fail(AppError.badInput(options.fileField, 'the form has too many parts')));
    parser.on('error', () => fail(malformed()));
    parser.on('close', () => {
      if (settled) return;
      Promise.resolve(handling).then(
        (file) => {
          if (settled) return void (file !== undefined && options.discard?.(file).catch(() => undefined));
          settled = true;
          resolve({ fields, file });
        },
        (error: unknown) => fail(clientFault(error)),
      );
    });
    // A client that goes away mid-body: nobody hears the answer, but what was stored is discarded.
    req.on('error', (error) => fail(error));
    req.pipe(parser);
  });
}

/** The errors busboy gives its parser and the open file stream when the body is not a whole form. */
const BROKEN_BODY_MESSAGES = new Set(['Unexpected end of file', 'Unexpected end of form', 'Malformed part header']);

function isBrokenBody(error: unknown): boolean {
  return error instanceof Error && !(error instanceof AppError) && BROKEN_BODY_MESSAGES.has(error.message);
}
