import { EventEmitter, on } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import { OperationTypeNode, parse } from 'graphql';
import type { Admitted } from '#gateway/subscriptions/admission.js';
import type { LiveEvent } from '#gateway/subscriptions/live-executor.js';
import { SharedRuns } from '#gateway/subscriptions/shared-runs.js';
import type { LiveCaller } from '#gateway/subscriptions/subgraph-streams.js';

const admitted = (text: string, variables: Record<string, unknown> = {}): Admitted => ({
  text,
  document: parse(text),
  operationName: undefined,
  variables,
  type: OperationTypeNode.SUBSCRIPTION,
});
const FOLLOW = 'subscription ($after: String) { contactEvents(after: $after) { id } }';
const caller = (authorization: string): LiveCaller => ({
  forwardHeaders: { authorization },
  requestId: 'r',
  clientAddress: '::1',
});

/** A source of events the test pushes, counting the runs started on it and the runs ended. */
class Source {
  private readonly emitter = new EventEmitter();
  started = 0;
  ended = 0;

  start = (signal: AbortSignal): AsyncIterable<LiveEvent> => {
    this.started += 1;
    return this.events(signal);
  };

  private async *events(signal: AbortSignal): AsyncGenerator<LiveEvent> {
    try {
      for await (const [event] of on(this.emitter, 'event', { signal }) as AsyncIterable<[LiveEvent | Error]>) {
        if (event instanceof Error) throw event;
        yield event;
      }
    } catch (error) {
      if ((error as Error).name !== 'AbortError') throw error;
    } finally {
      this.ended += 1;
    }
  }

  push(value: number | Error): void {
    this.emitter.emit('event', value instanceof Error ? value : { result: { data: { n: value } } });
  }
}

const take = async (events: AsyncIterator<LiveEvent>) => (await events.next()).value?.result.data?.n;
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('shared runs of the live graph', () => {
  it('runs alike subscriptions (same credentials, document, variables, from now) once, and hands each event to each', async () => {
    const runs = new SharedRuns();
    const source = new Source();
    const left = [new AbortController(), new AbortController()];
    const [a, b] = left.map((leaving) =>
      runs.follow(admitted(FOLLOW), caller('Bearer one'), source.start, leaving.signal)[Symbol.asyncIterator](),
    );
    await tick();
    source.push(1);
    expect([await take(a), await take(b)]).toEqual([1, 1]);
    expect(source.started).toBe(1);

    // One leaves: the run goes on for the other; the last to leave ends it.
    left[0].abort();
    await a.return?.();
    source.push(2);
    expect(await take(b)).toBe(2);
    expect(source.ended).toBe(0);
    left[1].abort();
    await b.return?.();
    await tick();
    expect(source.ended).toBe(1);
    expect(runs.size).toBe(0);
  });

  it('runs apart what may answer differently: other credentials, other variables, and a resume from a cursor', async () => {
    const runs = new SharedRuns();
    const source = new Source();
    const signal = new AbortController().signal;
    runs.follow(admitted(FOLLOW), caller('Bearer one'), source.start, signal);
    runs.follow(admitted(FOLLOW), caller('Bearer two'), source.start, signal);
    runs.follow(admitted(FOLLOW, { other: 1 }), caller('Bearer one'), source.start, signal);
    runs.follow(admitted(FOLLOW, { after: 'c1' }), caller('Bearer one'), source.start, signal);
    runs.follow(admitted(FOLLOW, { after: 'c1' }), caller('Bearer one'), source.start, signal);
    expect(source.started).toBe(5);
    expect(runs.size).toBe(3);
  });

  it("ends every subscriber with the run's failure, and a new subscriber then starts a run of its own", async () => {
    const runs = new SharedRuns();
    const source = new Source();
    const signal = new AbortController().signal;
    const [a, b] = [1, 2].map(() =>
      runs.follow(admitted(FOLLOW), caller('Bearer one'), source.start, signal)[Symbol.asyncIterator](),
    );
    await tick();
    source.push(new Error('the subgraph went away'));
    await expect(a.next()).rejects.toThrow('the subgraph went away');
    await expect(b.next()).rejects.toThrow('the subgraph went away');
    expect(runs.size).toBe(0);
    runs.follow(admitted(FOLLOW), caller('Bearer one'), source.start, signal);
    expect(source.started).toBe(2);
  });
});
