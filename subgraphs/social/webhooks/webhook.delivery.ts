import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockMode } from '@mikro-orm/core';
import type { PgBoss } from 'pg-boss';
import type { Config } from '#lib/config.js';
import type { EntityManager, Orm } from '#lib/data/database.js';
import { deriveKeys, masterKeys } from '#lib/secrets.js';
import { reasonOf } from '#lib/errors.js';
import type { Logger } from '#lib/observability/logger.js';
import { webhookDeliveries } from '#lib/observability/metrics.js';
import { ContentEvent } from '../content/content-event.entity.js';
import { TokenCipher, UnopenableSealedValue } from '../integrations/token-cipher.js';
import { jobsDbOf } from '#lib/data/job-queue.js';
import { Webhook, WebhookDelivery, WebhookMessage, WebhookMessageStatus, WebhookOutbox } from './webhook.entity.js';
import { eventsOfOutbox, type WebhookEvent } from './webhook.events.js';
import { untraced } from '#lib/observability/tracing.js';
import { sendWebhook, type SendOutcome, type SendSettings } from './webhook.sender.js';

export const WEBHOOK_QUEUE = 'social-webhook-delivery';

/** After the first attempt fails, the waits before each retry (Standard Webhooks' usual schedule, about a day and a half in all). */
export const RETRY_DELAYS_MS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 14 * 3600].map(
  (seconds) => seconds * 1000,
);
const JITTER = 0.2;
const DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;
const OUTBOX_BATCH = 100;
/** Delivery attempts and finished events are kept this long, for webhookDeliveries and redeliveries. */
export const HISTORY_DAYS = 30;
const PRUNE_EVERY_MS = 3600_000;

export interface WebhookSettings extends SendSettings {
  /** Seals and opens the signing secrets (their own key, derived like the platform tokens' one). */
  cipher: TokenCipher;
  retryDelaysMs: readonly number[];
  /** A webhook whose attempts have all failed for this long is disabled. */
  disableAfterMs: number;
  /** How often the outbox is looked at for committed changes. */
  outboxPollMs: number;
}

export const DEFAULT_WEBHOOK_TIMING = {
  timeoutMs: 10_000,
  retryDelaysMs: RETRY_DELAYS_MS,
  disableAfterMs: DISABLE_AFTER_MS,
  outboxPollMs: 1000,
};

/** Production calls public HTTPS endpoints only; secrets are sealed like platform tokens, under a key of their own. */
export function webhookSettingsOf(config: Config): WebhookSettings {
  return {
    ...DEFAULT_WEBHOOK_TIMING,
    production: config.isProduction,
    cipher: new TokenCipher(deriveKeys(masterKeys(config), 'webhook-secrets')),
  };
}

export interface DeliveryJob {
  messageId: string;
  /** A redelivery asked for by the owner: one attempt, whatever state the event is in, and no retries of its own. */
  manual?: boolean;
}

/** `delay` give or take at most 20 %, so retries of many events failing together spread out. */
export function withJitter(delayMs: number, random = Math.random): number {
  return Math.round(delayMs * (1 + (random() * 2 - 1) * JITTER));
}

/**
 * pg-boss's own retries only cover a worker that died mid-job; HTTP failures are retried on our schedule.
 * A worker killed mid-delivery stops its heartbeat, so another takes the delivery up some 40 s later
 * rather than after expireInSeconds and a maintenance round.
 */
const WEBHOOK_QUEUE_OPTIONS = { retryLimit: 2, retryDelay: 30, expireInSeconds: 120, heartbeatSeconds: 10 };

/**
 * Makes the delivery queue once (any process may be first), or brings one an earlier release made to
 * these settings, and fills pg-boss's cache, so a send inside a transaction never queries beside it.
 */
export async function prepareWebhookQueue(boss: PgBoss): Promise<void> {
  if (!(await boss.getQueue(WEBHOOK_QUEUE))) {
    await boss.createQueue(WEBHOOK_QUEUE, WEBHOOK_QUEUE_OPTIONS).catch(async (error) => {
      if (!(await boss.getQueue(WEBHOOK_QUEUE))) throw error;
    });
  } else {
    await boss.updateQueue(WEBHOOK_QUEUE, WEBHOOK_QUEUE_OPTIONS);
  }
  await boss.getJobById(WEBHOOK_QUEUE, randomUUID());
}

/** Queues one delivery attempt in `tx`'s transaction, so it exists exactly when the change that asked for it does. */
export async function enqueueDelivery(
  boss: PgBoss,
  tx: EntityManager,
  job: DeliveryJob,
  startAfter?: Date,
): Promise<void> {
  const id = await boss.send(WEBHOOK_QUEUE, job, { db: jobsDbOf(tx), ...(startAfter ? { startAfter } : {}) });
  if (!id) throw new Error('the webhook delivery job was not created');
}

function receives(webhook: Webhook, event: WebhookEvent): boolean {
  if (!webhook.events.includes(event.type)) return false;
  if (webhook.brandIds === null) return true;
  return event.brandId !== null && webhook.brandIds.includes(event.brandId);
}

/**
 * Turns committed outbox rows into one message per event and webhook, each with its delivery job,
 * and deletes the rows, all in one transaction. Rows are claimed with SKIP LOCKED, so any number
 * of processes may dispatch at once; a row of a change that rolled back never existed.
 */
export async function dispatchOutbox(em: EntityManager, boss: PgBoss): Promise<number> {
  // The idle case, every second: one cheap look on the queue's own path (like pg-boss's polling),
  // and a transaction only when there is something to dispatch.
  const { rows: waiting } = await jobsDbOf(em).executeSql('select 1 from social.webhook_outbox limit 1');
  if (!waiting.length) return 0;
  return em.transactional(async (tx) => {
    const rows = await tx.find(
      WebhookOutbox,
      {},
      { orderBy: { seq: 'asc' }, limit: OUTBOX_BATCH, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
    );
    if (!rows.length) return 0;
    const contentIds = rows.filter((row) => row.source === 'content_event').map((row) => row.sourceId);
    const contentEvents = contentIds.length ? await tx.find(ContentEvent, { id: { $in: contentIds } }) : [];
    const byId = new Map(contentEvents.map((event) => [event.id, event]));
    const owners = [...new Set(rows.map((row) => row.ownerId))];
    const webhooks = await tx.find(Webhook, { ownerId: { $in: owners }, enabled: true });
    const messages: WebhookMessage[] = [];
    for (const row of rows) {
      for (const event of eventsOfOutbox(row, byId.get(row.sourceId) ?? null)) {
        const targets = webhooks.filter((webhook) => webhook.ownerId === row.ownerId && receives(webhook, event));
        if (!targets.length) continue;
        const eventId = randomUUID();
        const body = JSON.stringify({ type: event.type, timestamp: event.occurredAt.toISOString(), data: event.data });
        for (const webhook of targets) {
          const message = new WebhookMessage();
          message.webhookId = webhook.id;
          message.ownerId = webhook.ownerId;
          message.eventId = eventId;
          message.type = event.type;
          message.body = body;
          message.nextAttemptAt = new Date();
          tx.persist(message);
          messages.push(message);
        }
      }
      tx.remove(row);
    }
    await tx.flush();
    for (const message of messages) await enqueueDelivery(boss, tx, { messageId: message.id });
    return rows.length;
  });
}

/** How one delivery job ended, and why when it did not deliver. */
export interface DeliveryResult {
  outcome: 'succeeded' | 'retrying' | 'failed' | 'skipped';
  reason?: string;
  /** The webhook's secret opens with no key of ENCRYPTION_KEY: nothing can be signed until it is set again. */
  unopenable?: boolean;
}

/**
 * Sends the message signed with the webhook's secret. A secret no key opens (sealed under a key since
 * dropped from ENCRYPTION_KEY) is an attempt that failed without a call, saying so: it is recorded
 * and retried like any other (it succeeds once the key is back), never a job that fails unseen.
 */
async function sendSigned(
  webhook: Webhook,
  message: WebhookMessage,
  settings: WebhookSettings,
): Promise<SendOutcome & { unopenable?: boolean }> {
  let secret: string;
  try {
    secret = settings.cipher.open(webhook.secretSealed, webhook.id, `webhook ${webhook.id}`);
  } catch (error) {
    if (!(error instanceof UnopenableSealedValue)) throw error;
    return {
      succeeded: false,
      statusCode: null,
      error: error.message,
      responseExcerpt: null,
      durationMs: 0,
      unopenable: true,
    };
  }
  return sendWebhook({ url: webhook.url, secret, id: message.eventId, body: message.body }, settings);
}

/**
 * One attempt of one message: sent outside any transaction (a slow receiver holds no lock), then
 * recorded with what follows from it in one transaction: the next retry's job, the message's end,
 * and the webhook's health (disabled after `disableAfterMs` of nothing but failures).
 */
export async function deliverMessage(
  em: EntityManager,
  boss: PgBoss,
  settings: WebhookSettings,
  job: DeliveryJob,
): Promise<DeliveryResult> {
  const message = await em.findOne(WebhookMessage, { id: job.messageId });
  if (!message || (message.status !== WebhookMessageStatus.PENDING && !job.manual)) return { outcome: 'skipped' };
  const webhook = await em.findOne(Webhook, { id: message.webhookId });
  if (!webhook) return { outcome: 'skipped' };
  if (!webhook.enabled) {
    if (message.status === WebhookMessageStatus.PENDING) {
      await em.nativeUpdate(
        WebhookMessage,
        { id: message.id },
        { status: WebhookMessageStatus.FAILED, nextAttemptAt: null },
      );
    }
    return { outcome: 'failed', reason: 'the webhook is disabled' };
  }
  const outcome = await sendSigned(webhook, message, settings);

  const ended = await em.transactional(async (tx): Promise<DeliveryResult['outcome']> => {
    const current = await tx.findOneOrFail(
      WebhookMessage,
      { id: message.id },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    const hook = await tx.findOneOrFail(
      Webhook,
      { id: webhook.id },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    current.attempts += 1;
    const attempt = new WebhookDelivery();
    Object.assign(attempt, {
      messageId: current.id,
      webhookId: hook.id,
      eventId: current.eventId,
      type: current.type,
      attempt: current.attempts,
      succeeded: outcome.succeeded,
      statusCode: outcome.statusCode,
      error: outcome.error,
      responseExcerpt: outcome.responseExcerpt,
      durationMs: outcome.durationMs,
    });
    tx.persist(attempt);
    const now = new Date();
    if (outcome.succeeded) {
      current.status = WebhookMessageStatus.SUCCEEDED;
      current.nextAttemptAt = null;
      hook.failingSince = null;
      return 'succeeded';
    }
    hook.failingSince ??= now;
    if (now.getTime() - hook.failingSince.getTime() >= settings.disableAfterMs) {
      hook.enabled = false;
      hook.disabledReason = `every delivery failed from ${hook.failingSince.toISOString()} to ${now.toISOString()}; the last: ${outcome.error}`;
      hook.updatedAt = now;
      current.status = WebhookMessageStatus.FAILED;
      current.nextAttemptAt = null;
      return 'failed';
    }
    // A redelivery is one attempt: an automatic retry already planned goes on as planned.
    if (job.manual) return current.status === WebhookMessageStatus.PENDING ? 'retrying' : 'failed';
    const delay = settings.retryDelaysMs[current.attempts - 1];
    if (delay === undefined) {
      current.status = WebhookMessageStatus.FAILED;
      current.nextAttemptAt = null;
      return 'failed';
    }
    current.nextAttemptAt = new Date(now.getTime() + withJitter(delay));
    await tx.flush();
    await enqueueDelivery(boss, tx, { messageId: current.id }, current.nextAttemptAt);
    return 'retrying';
  });
  if (outcome.succeeded) return { outcome: ended };
  return { outcome: ended, reason: outcome.error ?? 'the delivery failed', unopenable: outcome.unopenable };
}

/** Deletes attempts and finished events older than HISTORY_DAYS (a pending one stays until it ends). */
export async function pruneWebhookHistory(em: EntityManager, now = new Date()): Promise<void> {
  const before = new Date(now.getTime() - HISTORY_DAYS * 24 * 3600_000).toISOString();
  // Housekeeping, like the idle look at the outbox, runs on the queue's own path, beside no request.
  const db = jobsDbOf(em);
  await db.executeSql('delete from social.webhook_delivery where attempted_at < $1', [before]);
  await db.executeSql(`delete from social.webhook_message where created_at < $1 and status <> 'pending'`, [before]);
}

/**
 * Puts this process to work on webhooks: the outbox is polled (a cheap indexed query) and each
 * delivery attempt is a pg-boss job, a few at a time so one slow receiver does not hold up others;
 * once an hour the history older than HISTORY_DAYS is pruned.
 */
export async function startWebhookWorkers(
  boss: PgBoss,
  orm: Orm,
  settings: WebhookSettings,
  logger: Logger,
): Promise<{ stop(): Promise<void> }> {
  const log = logger.child({ component: 'webhooks' });
  await prepareWebhookQueue(boss);
  await boss.work<DeliveryJob>(
    WEBHOOK_QUEUE,
    { pollingIntervalSeconds: 1, batchSize: 1, localConcurrency: 4 },
    async ([job]) => {
      const { messageId } = job.data;
      try {
        const { outcome, reason, unopenable } = await deliverMessage(orm.em.fork(), boss, settings, job.data);
        if (outcome !== 'skipped') webhookDeliveries.inc({ outcome });
        // A receiver's refusal is the receiver's business; a secret no key opens is the operator's.
        if (unopenable) log.error({ messageId, outcome, reason }, 'webhook secret opens with no key');
        else if (reason) log.warn({ messageId, outcome, reason }, 'webhook delivery failed');
        else log.debug({ messageId, outcome }, 'webhook attempt done');
        return { outcome };
      } catch (error) {
        log.error({ err: error, messageId, reason: reasonOf(error) }, 'webhook delivery job failed');
        throw error;
      }
    },
  );
  const stopping = new AbortController();
  let prunedAt = 0;
  // Background work, not a request's: no trace of its own every second (pg-boss makes spans).
  const loop = untraced(async () => {
    while (!stopping.signal.aborted) {
      try {
        if (Date.now() - prunedAt >= PRUNE_EVERY_MS) {
          prunedAt = Date.now();
          await pruneWebhookHistory(orm.em.fork());
        }
        // Drain what is there before waiting again.
        while (!stopping.signal.aborted && (await dispatchOutbox(orm.em.fork(), boss)) === OUTBOX_BATCH);
      } catch (error) {
        log.error({ err: error }, 'webhook outbox dispatch failed');
      }
      await sleep(settings.outboxPollMs, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  });
  return {
    stop: async () => {
      stopping.abort();
      await loop;
      await boss.offWork(WEBHOOK_QUEUE);
    },
  };
}
