import type { ServerResponse } from 'node:http';

/** How long a client may read nothing of what is waiting for it before it is disconnected. */
export const SLOW_READER_MS = 30_000;
/** What may wait for one client at most, whatever the time: past it the client is disconnected at once. */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/**
 * Writes a stream's chunks to an HTTP answer without holding them for a client that does not read:
 * once the socket stops taking them (`write` answers false), the client has `SLOW_READER_MS` to read
 * what waits, else its connection is cut; so is one with more than `MAX_BUFFERED_BYTES` waiting. A cut
 * client reconnects with its last cursor and misses nothing.
 */
export class StreamWriter {
  private stalled: NodeJS.Timeout | undefined;

  constructor(private readonly res: ServerResponse) {
    res.on('drain', () => this.flowing());
    res.once('close', () => this.flowing());
  }

  get open(): boolean {
    return !this.res.destroyed && !this.res.writableEnded;
  }

  /** Whether the last writes are still waiting for the client: a heartbeat is then pointless. */
  get waiting(): boolean {
    return this.stalled !== undefined;
  }

  write(chunk: string): void {
    if (!this.open) return;
    const accepted = this.res.write(chunk);
    if ((this.res.socket?.writableLength ?? 0) + this.res.writableLength > MAX_BUFFERED_BYTES) {
      this.res.destroy();
      return;
    }
    if (!accepted && !this.stalled) {
      this.stalled = setTimeout(() => this.res.destroy(), SLOW_READER_MS);
      this.stalled.unref();
    }
  }

  end(chunk?: string): void {
    if (!this.open) return;
    this.res.end(chunk);
  }

  private flowing(): void {
    clearTimeout(this.stalled);
    this.stalled = undefined;
  }
}
