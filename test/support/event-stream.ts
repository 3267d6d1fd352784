/** A server-sent event as a test reads it: `id:`, `event:` and its `data:` parsed as JSON. */
export interface SentEvent {
  id?: string;
  event?: string;
  data: any;
}

/** A server-sent event stream read as it comes: its events, one at a time, or the end. */
export class EventStreamReader {
  private buffer = '';
  private readonly events: SentEvent[] = [];
  private ended = false;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();

  constructor(readonly response: Response) {
    this.reader = response.body!.getReader();
  }

  /** The next event, or 'ended' when the stream ended; fails after `timeoutMs`. */
  async next(timeoutMs = 10_000): Promise<SentEvent | 'ended'> {
    const deadline = Date.now() + timeoutMs;
    while (!this.events.length && !this.ended) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no event in time');
      let timer: NodeJS.Timeout | undefined;
      const read = await Promise.race([
        this.reader.read(),
        new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), left))),
      ]).finally(() => clearTimeout(timer));
      if (read === 'timeout') continue;
      if (read.done) this.ended = true;
      else this.take(this.decoder.decode(read.value, { stream: true }));
    }
    return this.events.shift() ?? 'ended';
  }

  /** Whether nothing more arrives within `ms`. */
  async quietFor(ms: number): Promise<boolean> {
    try {
      const event = await this.next(ms);
      if (event !== 'ended') this.events.unshift(event);
      return event === 'ended';
    } catch {
      return true;
    }
  }

  async close(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }

  private take(text: string): void {
    this.buffer += text;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: Partial<SentEvent> & { data?: string } = {};
      for (const line of block.split('\n')) {
        if (!line || line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = line.slice(0, colon);
        const value = line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id' || field === 'event' || field === 'data') event[field] = value;
      }
      if (event.data !== undefined) this.events.push({ ...event, data: JSON.parse(event.data) });
    }
  }
}
