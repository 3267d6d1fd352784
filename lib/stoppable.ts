/**
 * A stream whose `return()` ends it at once. An async generator's own `return()` does not: while
 * the generator waits for its source's next item, the call is queued until that item comes, so a
 * subscriber who leaves a quiet stream would hold everything behind it until the next event, or
 * for ever. The `Stoppable` streams below, and `LocalSubgraph.subscribe`'s, end a pending `next()`.
 */
export interface Stoppable<T> extends AsyncIterableIterator<T> {
  return(): Promise<IteratorResult<T>>;
}

/**
 * Runs `body` as a stream that stops at once: `return()` first aborts the signal `body` was given,
 * then returns the generator. `body` hands the signal to what it waits on (a subgraph's stream, an
 * SSE client), which ends its pending wait at the abort; the generator then runs its `finally`
 * without waiting for another item, and every layer between unwinds with it. `left` runs at
 * `return()` too: a generator returned before its first `next()` never runs its `finally`, so what
 * was taken for the stream before it started is given back there.
 */
export function stoppable<T>(body: (signal: AbortSignal) => AsyncGenerator<T>, left?: () => void): Stoppable<T> {
  const stop = new AbortController();
  const generator = body(stop.signal);
  return {
    next: () => generator.next(),
    return() {
      left?.();
      stop.abort();
      return generator.return(undefined);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * Calls `end` when `signal` aborts (at once when it already has), and answers how to stop listening:
 * a stream that ends by itself forgets its signal so that nothing stays attached to it.
 */
export function whenAborted(signal: AbortSignal | undefined, end: () => void): () => void {
  if (!signal) return () => undefined;
  if (signal.aborted) {
    end();
    return () => undefined;
  }
  signal.addEventListener('abort', end, { once: true });
  return () => signal.removeEventListener('abort', end);
}
