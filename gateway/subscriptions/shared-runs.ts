import { createHash } from 'node:crypto';
import { whenAborted } from '#lib/stoppable.js';
import type { Admitted } from './admission.js';
import type { LiveEvent } from './live-executor.js';
import { startsNow } from './resume.js';
import type { LiveCaller } from './subgraph-streams.js';

/** Events a subscriber may leave unread before it is cut off (its transport reads as fast as its client does). */
const MOST_UNREAD = 1000;

/**
 * Subscriptions that would run exactly alike share one run. Two subscriptions run alike when the
 * same credentials (the very bytes of their `Authorization`, API key or cookie) from the same client
 * address send the same document with the same variables and start from now: one user's tabs, a
 * wall of dashboards on one API key. Each event is then authorised and resolved once for all of
 * them, which is what each would have got alone, and handed to each. A subscription that resumes
 * from a cursor runs alone: it has history of its own to read first.
 */
export class SharedRuns {
  private readonly runs = new Map<string, SharedRun>();

  /** The events of `admitted` for one subscriber: from a run already going, or a run `start` begins. */
  follow(
    admitted: Admitted,
    caller: LiveCaller,
    start: (signal: AbortSignal) => AsyncIterable<LiveEvent>,
    signal: AbortSignal,
  ): AsyncIterable<LiveEvent> {
    if (!startsNow(admitted)) return start(signal);
    const key = keyOf(admitted, caller);
    let run = this.runs.get(key);
    if (!run) {
      const forget = (ended: SharedRun) => this.runs.get(key) === ended && this.runs.delete(key);
      run = new SharedRun(start, forget);
      this.runs.set(key, run);
    }
    return run.join(signal);
  }

  /** How many runs are going (the metrics, and tests). */
  get size(): number {
    return this.runs.size;
  }
}

function keyOf(admitted: Admitted, caller: LiveCaller): string {
  const headers = Object.entries(caller.forwardHeaders).sort(([a], [b]) => (a < b ? -1 : 1));
  const alike = [
    headers,
    caller.clientAddress ?? null,
    admitted.text,
    admitted.operationName ?? null,
    admitted.variables,
  ];
  return createHash('sha256').update(JSON.stringify(alike)).digest('base64url');
}

/** A subscriber of a shared run: the events handed to it and not yet read. */
interface Member {
  unread: LiveEvent[];
  ended: boolean;
  failure?: Error;
  wake?: () => void;
}

/** One run and its subscribers; it ends when its last subscriber leaves, or its events end. */
class SharedRun {
  private readonly members = new Set<Member>();
  private readonly stop = new AbortController();

  constructor(
    start: (signal: AbortSignal) => AsyncIterable<LiveEvent>,
    private readonly forget: (run: SharedRun) => void,
  ) {
    void this.pump(start(this.stop.signal));
  }

  /** A new subscriber, a member from now on (not from its first read: the run may end before). */
  join(signal: AbortSignal): AsyncGenerator<LiveEvent> {
    const member: Member = { unread: [], ended: false };
    this.members.add(member);
    // The subscriber leaving ends its membership at once, even one that never read.
    const forgetSignal = whenAborted(signal, () => {
      this.end(member);
      this.leave(member);
    });
    return this.eventsOf(member, forgetSignal);
  }

  private async *eventsOf(member: Member, forgetSignal: () => void): AsyncGenerator<LiveEvent> {
    try {
      for (;;) {
        const event = member.unread.shift();
        if (event) yield event;
        else if (member.failure !== undefined) throw member.failure;
        else if (member.ended) return;
        else await new Promise<void>((resolve) => (member.wake = resolve));
      }
    } finally {
      forgetSignal();
      this.leave(member);
    }
  }

  private async pump(events: AsyncIterable<LiveEvent>): Promise<void> {
    try {
      for await (const event of events) {
        for (const member of this.members) {
          if (member.unread.length >= MOST_UNREAD) {
            this.end(member, new Error('a subscriber of a shared run left more events unread than it may'));
          } else {
            member.unread.push(event);
            member.wake?.();
          }
        }
      }
      for (const member of this.members) this.end(member);
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(`the run failed: ${String(error)}`);
      for (const member of this.members) this.end(member, failure);
    } finally {
      this.forget(this);
    }
  }

  private end(member: Member, failure?: Error): void {
    member.ended = true;
    if (failure !== undefined) member.failure = failure;
    member.wake?.();
  }

  private leave(member: Member): void {
    if (!this.members.delete(member) || this.members.size > 0) return;
    // The last subscriber left: the run ends, and a new subscriber starts a run of its own.
    this.forget(this);
    this.stop.abort();
  }
}
