import { Readable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { crlfRecords } from '#lib/data/copy-csv.js';

/** What crlfRecords makes of `chunks`, fed one after another as COPY's stream would. */
async function through(chunks: string[]): Promise<string> {
  const out: Buffer[] = [];
  for await (const chunk of Readable.from(chunks.map((text) => Buffer.from(text))).pipe(crlfRecords())) {
    out.push(chunk as Buffer);
  }
  return Buffer.concat(out).toString();
}

describe('crlfRecords', () => {
  it('ends each record with CRLF and keeps line breaks inside quoted fields', async () => {
    const copied = 'id,name\n1,"two\nlines"\n2,"a ""quoted""\nword",x\n3,\n';
    expect(await through([copied])).toBe('id,name\r\n1,"two\nlines"\r\n2,"a ""quoted""\nword",x\r\n3,\r\n');
  });

  it('keeps the quoting state across chunk boundaries, wherever they fall', async () => {
    const copied = 'a,"b\n""c""\nd"\ne,"\n"\n';
    const expected = 'a,"b\n""c""\nd"\r\ne,"\n"\r\n';
    for (let cut = 0; cut <= copied.length; cut++) {
      for (let second = cut; second <= copied.length; second++) {
        const chunks = [copied.slice(0, cut), copied.slice(cut, second), copied.slice(second)].filter(Boolean);
        expect(await through(chunks)).toBe(expected);
      }
    }
  });
});
