import { Transform, type TransformCallback } from 'node:stream';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/**
 * PostgreSQL's `COPY ... TO STDOUT WITH (FORMAT csv)` ends every record with a bare LF and has no
 * option for another ending; RFC 4180 (and the files the platform always wrote) end records with
 * CRLF. This turns each record's LF into CRLF and leaves the line breaks inside quoted fields as they
 * are. In COPY's output a quote only ever appears in a quoted field, doubled inside it, so counting
 * quotes tells inside from outside; the state carries over from one chunk to the next.
 */
export function crlfRecords(): Transform {
  let quoted = false;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      // Where each record ends in this chunk; Buffer.indexOf skips the bytes between in native code.
      const ends: number[] = [];
      let nextQuote = chunk.indexOf(QUOTE);
      for (let at = 0; at < chunk.length;) {
        if (quoted) {
          if (nextQuote === -1) break;
          quoted = false;
          at = nextQuote + 1;
          nextQuote = chunk.indexOf(QUOTE, at);
          continue;
        }
        const lineEnd = chunk.indexOf(LF, at);
        if (nextQuote !== -1 && (lineEnd === -1 || nextQuote < lineEnd)) {
          quoted = true;
          at = nextQuote + 1;
          nextQuote = chunk.indexOf(QUOTE, at);
          continue;
        }
        if (lineEnd === -1) break;
        ends.push(lineEnd);
        at = lineEnd + 1;
      }
      if (!ends.length) return done(null, chunk);
      const out = Buffer.allocUnsafe(chunk.length + ends.length);
      let from = 0;
      let written = 0;
      for (const end of ends) {
        written += chunk.copy(out, written, from, end);
        out[written++] = CR;
        from = end;
      }
      chunk.copy(out, written, from);
      done(null, out);
    },
  });
}
