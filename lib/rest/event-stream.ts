import type { Request, Response } from 'express';
import type { ProblemDetails } from '../errors.js';

/** How often an idle stream sends a comment, so that proxies and browsers keep it open. */
export const KEEPALIVE_MS = 15_000;
/** How long a client may leave what was written to it unread before it is disconnected. */
export const SLOW_READER_MS = 30_000;

/** One server-sent event: `id:` (the cursor a reconnect sends back as `Last-Event-ID`), `event:` and its JSON `data:`. */
export interface StreamEvent {
  id?: string;
  event: string;
  data: unknown;
}

/** Whether the request asks for server-sent events (`Accept: text/event-stream`). */
export function wantsEventStream(req: Request): boolean {
  return (req.get('accept') ?? '').split(',').some((type) => type.trim().startsWith('text/event-stream'));
}

/** `Last-Event-ID` of a reconnect: where the stream resumes. */
export function lastEventIdOf(req: Request): string | undefined {
  return req.get('last-event-id')?.trim() || undefined;
}

/**
 * The streams one REST service has open, for its shutdown: each ends as an event stream ends, and
 * its client reconnects (to another instance, or here after the restart) with its `Last-Event-ID`.
 */
export class EventStreams {
  private readonly open = new Set<() => void>();
  /** Set once shutdown began: a stream asked for now is refused (503), its client goes elsewhere. */
  closing = false;

  track(end: () => void): () => void {
    this.open.add(end);
    return () => this.open.delete(end);
  }

  endAll(): void {
    this.closing = true;
    for (const end of [...this.open]) end();
    this.open.clear();
  }
}

/** An SSE field's value on one line: JSON has no raw newline, a cursor none either; this holds that. */
const oneLine = (value: string) => value.replace(/[\r\n]/g, '');

/**
 * Sends `events` as server-sent events on `res` until they end, the client leaves or the service shuts
 * down. The next event is read only once the client took the last one (its socket drained): a client
 * that reads nothing for `SLOW_READER_MS` is disconnected rather than buffered for. A failure after
 * the answer started is an `event: error` carrying the problem, and the stream ends.
 */
export async function sendEventStream(
  res: Response,
  events: AsyncIterator<StreamEvent>,
  streams: EventStreams,
  problemOf: (error: unknown) => ProblemDetails,
): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    // no-transform: compression would hold events back to fill its blocks.
    'cache-control': 'private, no-store, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(keepalive);
    if (!res.writableEnded) res.end();
    void events.return?.();
  };
  const forget = streams.track(end);
  res.once('close', () => {
    forget();
    end();
  });
  const write = async (chunk: string) => {
    if (ended || res.writableEnded || res.destroyed) return;
    if (res.write(chunk)) return;
    const stalled = setTimeout(() => res.destroy(), SLOW_READER_MS);
    await new Promise<void>((resolve) => {
      const go = () => {
        res.off('drain', go).off('close', go);
        resolve();
      };
      res.once('drain', go).once('close', go);
    });
    clearTimeout(stalled);
  };
  // A first comment at once: some clients show no stream before its first bytes.
  void write(':\n\n');
  const keepalive = setInterval(() => {
    if (res.writableNeedDrain) return;
    void write(':\n\n');
  }, KEEPALIVE_MS);
  keepalive.unref();
  try {
    for (;;) {
      const next = await events.next();
      if (next.done || ended) break;
      const { id, event, data } = next.value;
      await write(`${id ? `id: ${oneLine(id)}\n` : ''}event: ${oneLine(event)}\ndata: ${JSON.stringify(data)}\n\n`);
    }
  } catch (error) {
    await write(`event: error\ndata: ${JSON.stringify(problemOf(error))}\n\n`);
  } finally {
    forget();
    end();
  }
}

/**
 * The events of a stream of answers: each answer made an event by `toEvent`, or skipped when it
 * answers undefined (a filter of the route's own). `return()` leaves the answers at once.
 */
export function eventsOf<Answer>(
  answers: AsyncIterator<Answer>,
  toEvent: (answer: Answer) => StreamEvent | undefined,
): AsyncIterator<StreamEvent> {
  return {
    async next() {
      for (;;) {
        const next = await answers.next();
        if (next.done) return { done: true, value: undefined };
        const event = toEvent(next.value);
        if (event) return { done: false, value: event };
      }
    },
    async return() {
      await answers.return?.();
      return { done: true, value: undefined };
    },
  };
}
