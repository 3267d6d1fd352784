import { Transform, type TransformCallback } from 'node:stream';

/**
 * The first characters that make a spreadsheet run a cell as a formula (=, +, -, @, tab, CR: OWASP
 * "CSV injection"). A cell of a file the platform writes that starts with one is made text with a
 * leading apostrophe, whether Node writes the file (`spreadsheetSafe`) or PostgreSQL's COPY does
 * (`spreadsheetSafeSql`): one rule, in its two forms.
 */
const FORMULA_STARTS = ['=', '+', '-', '@', '\t', '\r'];

/** `cell` as a spreadsheet shows it as text: with a leading apostrophe when it would start a formula. */
export function spreadsheetSafe(cell: string): string {
  return FORMULA_STARTS.includes(cell.charAt(0)) ? `'${cell}` : cell;
}

/**
 * The same rule as SQL over the text expression `sql`; also NULL for an empty cell, which COPY writes
 * unquoted. It tests the first character's code, an integer: comparing text would go through the
 * collation and cost a COPY more than all the rest of its formatting.
 */
export function spreadsheetSafeSql(sql: string): string {
  const codes = FORMULA_STARTS.map((start) => start.charCodeAt(0)).join(', ');
  return `case when ascii(${sql}) in (${codes}) then '''' || ${sql} else nullif(${sql}, '') end`;
}

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
