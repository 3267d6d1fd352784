import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import type { Orm } from '#lib/data/database.js';
import type { PublisherTools } from '#subgraphs/social/publishing/publisher.service.js';
import { PUBLISH_QUEUE, REFRESH_QUEUE, type PublishQueue } from '#subgraphs/social/publishing/publish-queue.js';
import { startPublisherWorkers } from '#subgraphs/social/publishing/publisher.worker.js';
import {
  startWebhookWorkers,
  WEBHOOK_QUEUE,
  type WebhookSettings,
} from '#subgraphs/social/webhooks/webhook.delivery.js';
import { LogCollector } from '#test/support/logs.js';

type Handler = (jobs: Array<Record<string, unknown>>) => Promise<unknown>;

/** A pg-boss that keeps each worker's handler for the test to call, and answers anything else with nothing. */
function capturingBoss() {
  const handlers = new Map<string, Handler>();
  const target: Record<string, unknown> = {
    work: async (name: string, _options: unknown, handler: Handler) => {
      handlers.set(name, handler);
      return name;
    },
  };
  const boss = new Proxy(target, { get: (known, key: string) => known[key] ?? (async () => null) });
  return { boss, handlers };
}

/** A database that has gone away: every statement fails with the same reason. */
const brokenOrm = {
  em: {
    fork: () =>
      new Proxy(
        {},
        {
          get: () => () => {
            throw new Error('connection terminated unexpectedly');
          },
        },
      ),
  },
} as unknown as Orm;

describe('job failures reach the log with their reason', () => {
  it('a publish job and a token renewal that fail', async () => {
    const sink = new LogCollector();
    const { boss, handlers } = capturingBoss();
    await startPublisherWorkers({ boss } as unknown as PublishQueue, brokenOrm, {} as PublisherTools, pino(sink));
    const job = { id: 'j1', data: { postId: 'p1' }, retryCount: 0, retryLimit: 3 };
    await expect(handlers.get(PUBLISH_QUEUE)!([job])).rejects.toThrow('connection terminated');
    await expect(handlers.get(REFRESH_QUEUE)!([{ id: 'j2', data: {} }])).rejects.toThrow('connection terminated');
    const failures = sink.lines.filter((line) => line.level === 50);
    expect(failures).toEqual([
      expect.objectContaining({
        msg: 'publish job failed',
        postId: 'p1',
        reason: 'connection terminated unexpectedly',
      }),
      expect.objectContaining({ msg: 'token renewal job failed', reason: 'connection terminated unexpectedly' }),
    ]);
  });

  it('a webhook delivery that fails', async () => {
    const sink = new LogCollector();
    const { boss, handlers } = capturingBoss();
    const workers = await startWebhookWorkers(
      boss as never,
      brokenOrm,
      { outboxPollMs: 60_000 } as WebhookSettings,
      pino(sink),
    );
    try {
      await expect(handlers.get(WEBHOOK_QUEUE)!([{ id: 'j3', data: { messageId: 'm1' } }])).rejects.toThrow(
        'connection terminated',
      );
    } finally {
      await workers.stop();
    }
    expect(sink.lines.find((line) => line.msg === 'webhook delivery job failed')).toMatchObject({
      level: 50,
      messageId: 'm1',
      reason: 'connection terminated unexpectedly',
    });
  });
});
