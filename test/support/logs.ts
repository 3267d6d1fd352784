import { Writable } from 'node:stream';

/** Collects the platform's JSON log lines so a test can follow one request id through every part. */
export class LogCollector extends Writable {
  readonly lines: Array<Record<string, any>> = [];
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    for (const line of chunk.toString().split('\n').filter(Boolean)) this.lines.push(JSON.parse(line));
    callback();
  }
}
