import { comparePositions, type FeedPosition } from './event-cursor.js';

/** An event with where it stands in the log. */
export interface Positioned<Event> {
  event: Event;
  position: FeedPosition;
  cursor: string;
}

/** Events read per statement, by the shared reader and by a follower catching up. */
export const BATCH = 500;
/** Events a follower holds for a slow consumer before it lets them go and reads them again later. */
const FOLLOWER_QUEUE = 1000;

/** What a follower reads its gaps with: the feed's own read, after a position. */
interface FeedReader<Event> {
  read(after: FeedPosition, limit: number): Promise<Positioned<Event>[]>;
}

/** One subscriber's place in the feed: what it was handed and not yet taken, and whether it must read a gap. */
export class Follower<Event> implements AsyncIterableIterator<Positioned<Event>> {
  private readonly queue: Positioned<Event>[] = [];
  private gap = true;
  private done = false;
  private waiting: (() => void) | undefined;

  constructor(
    private readonly feed: FeedReader<Event>,
    private position: FeedPosition,
    private readonly keep: (event: Event) => boolean,
    private alreadyCommitted: ReadonlySet<bigint> | undefined,
    private readonly leave: () => void,
  ) {}

  /** A batch the shared reader read after `from`: taken when it joins on, else a gap to read alone. */
  offer(from: FeedPosition, batch: Positioned<Event>[]): void {
    if (comparePositions(from, this.position) > 0 || this.queue.length >= FOLLOWER_QUEUE) this.gap = true;
    else this.take(batch);
    this.wake();
  }

  end(): void {
    this.done = true;
    this.wake();
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Positioned<Event>> {
    return this;
  }

  async next(): Promise<IteratorResult<Positioned<Event>>> {
    for (;;) {
      if (this.done) return { done: true, value: undefined };
      const event = this.queue.shift();
      if (event) return { done: false, value: event };
      if (this.gap) {
        this.gap = false;
        const batch = await this.feed.read(this.position, BATCH);
        this.take(batch);
        if (batch.length === BATCH) this.gap = true;
        continue;
      }
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  async return(): Promise<IteratorResult<Positioned<Event>>> {
    this.end();
    return { done: true, value: undefined };
  }

  /** Takes the events after its position that it keeps, in order: none is ever taken twice. */
  private take(batch: Positioned<Event>[]): void {
    for (const item of batch) {
      if (comparePositions(item.position, this.position) <= 0) continue;
      const news = !this.alreadyCommitted?.has(item.position.xact);
      if (news && this.keep(item.event)) this.queue.push(item);
      this.position = item.position;
    }
  }

  private wake(): void {
    if (this.done) this.leave();
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }
}
