import { randomBytes } from 'node:crypto';
import type { PgBoss } from 'pg-boss';
import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import { hasScope } from '#lib/identity.js';
import { isUuid } from '#lib/ids.js';
import { keysetWindow, pageOfQuery, type KeysetArgs, type Keyset } from '#lib/data/keyset.js';
import type { Connection } from '#lib/data/pagination.js';
import { Brand } from '../access/brand.entity.js';
import type { Reach } from '../access/reach.js';
import type { TokenCipher } from '../integrations/token-cipher.js';
import { checkWebhookTarget, type AddressPolicy } from './webhook-address.js';
import { enqueueDelivery } from './webhook.delivery.js';
import { Webhook, WebhookDelivery, WebhookMessage } from './webhook.entity.js';
import { isWebhookEventType, WEBHOOK_EVENT_SCOPES, WEBHOOK_EVENT_TYPES } from './webhook.events.js';
import type { CreateWebhookInput, UpdateWebhookInput } from './webhook.input.js';

/** Delivery attempts, newest first (the index webhook_delivery_webhook_idx). */
const NEWEST_ATTEMPT_FIRST: Keyset<WebhookDelivery> = {
  direction: 'desc',
  parts: [
    { column: 'd.attempted_at', kind: 'time', of: (delivery) => delivery.attemptedAt },
    { column: 'd.id', kind: 'id', of: (delivery) => delivery.id },
  ],
};

/** What the webhook service needs beyond the request: the secrets' cipher, the URL policy, the queue redeliveries go on. */
export interface WebhookTools extends AddressPolicy {
  cipher: TokenCipher;
  boss: PgBoss;
}

/**
 * The caller's webhooks. An API key limited to some brands sees and changes only webhooks inside
 * those brands, and a webhook it makes receives only their events; a webhook for every brand
 * (`brandIds` null) belongs to bearer tokens and `brand:*` keys. Whatever decides what a receiver
 * gets (the events, the brands, the URL, a redelivery) also needs the scopes that read those
 * events (WEBHOOK_EVENT_SCOPES), so settings.write alone cannot read posts through a webhook.
 */
export class WebhookService {
  constructor(
    private readonly em: EntityManager,
    private readonly reach: Reach,
    private readonly tools: WebhookTools,
  ) {}

  private visible(webhook: Webhook): boolean {
    if (webhook.ownerId !== this.reach.ownerId) return false;
    if (this.reach.everyBrand) return true;
    return webhook.brandIds !== null && webhook.brandIds.every((id) => this.reach.covers(id));
  }

  async list(): Promise<Webhook[]> {
    const all = await this.em.find(
      Webhook,
      { ownerId: this.reach.ownerId },
      { orderBy: { createdAt: 'desc', id: 'desc' } },
    );
    return all.filter((webhook) => this.visible(webhook));
  }

  async get(id: string): Promise<Webhook> {
    const webhook = isUuid(id) ? await this.em.findOne(Webhook, { id, ownerId: this.reach.ownerId }) : null;
    if (!webhook || !this.visible(webhook)) throw AppError.notFound('Webhook');
    return webhook;
  }

  async create(input: CreateWebhookInput): Promise<{ secret: string; webhook: Webhook }> {
    const webhook = new Webhook();
    webhook.ownerId = this.reach.ownerId;
    webhook.url = await checkWebhookTarget(input.url, this.tools);
    webhook.events = checkEvents(input.events);
    this.requireEventScopes(webhook.events);
    webhook.brandIds = await this.checkBrands(input.brandIds);
    webhook.description = input.description?.trim() || null;
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    webhook.secretSealed = this.tools.cipher.seal(secret, webhook.id);
    await this.em.persist(webhook).flush();
    return { secret, webhook };
  }

  async update(id: string, input: UpdateWebhookInput): Promise<Webhook> {
    const webhook = await this.get(id);
    const url = input.url !== undefined && input.url !== null ? await checkWebhookTarget(input.url, this.tools) : null;
    const events = input.events !== undefined && input.events !== null ? checkEvents(input.events) : webhook.events;
    const brandIds = input.brandIds !== undefined ? await this.checkBrands(input.brandIds) : webhook.brandIds;
    const redirected =
      (url !== null && url !== webhook.url) ||
      !sameList(events, webhook.events) ||
      !sameList(brandIds ?? [], webhook.brandIds ?? []) ||
      (brandIds === null) !== (webhook.brandIds === null);
    if (redirected) this.requireEventScopes(events);
    if (url !== null) webhook.url = url;
    webhook.events = events;
    webhook.brandIds = brandIds;
    if (input.description !== undefined) webhook.description = input.description?.trim() || null;
    if (input.enabled !== undefined && input.enabled !== null && input.enabled !== webhook.enabled) {
      webhook.enabled = input.enabled;
      webhook.disabledReason = input.enabled ? null : 'disabled by its owner';
      webhook.failingSince = null;
    }
    webhook.updatedAt = new Date();
    await this.em.flush();
    return webhook;
  }

  async delete(id: string): Promise<Webhook> {
    const webhook = await this.get(id);
    await this.em.remove(webhook).flush();
    return webhook;
  }

  /** Attempts newest first, as a keyset connection. */
  async deliveries(webhookId: string, args: KeysetArgs): Promise<Connection<WebhookDelivery>> {
    const window = keysetWindow(NEWEST_ATTEMPT_FIRST, args);
    const webhook = await this.get(webhookId);
    const where = { webhookId: webhook.id };
    const query = this.em.createQueryBuilder(WebhookDelivery, 'd').where(where);
    return pageOfQuery(query, NEWEST_ATTEMPT_FIRST, window, () => this.em.count(WebhookDelivery, where));
  }

  /** Sends the event of an attempt once more, now, with the same webhook-id (a receiver that has it already drops it). */
  async redeliver(deliveryId: string): Promise<WebhookMessage> {
    const attempt = isUuid(deliveryId) ? await this.em.findOne(WebhookDelivery, { id: deliveryId }) : null;
    const webhook = attempt
      ? await this.em.findOne(Webhook, { id: attempt.webhookId, ownerId: this.reach.ownerId })
      : null;
    if (!attempt || !webhook || !this.visible(webhook)) throw AppError.notFound('Webhook delivery');
    this.requireEventScopes([attempt.type]);
    if (!webhook.enabled) throw AppError.badInput('deliveryId', 'belongs to a disabled webhook: enable it first');
    return this.em.transactional(async (tx) => {
      const message = await tx.findOneOrFail(WebhookMessage, { id: attempt.messageId });
      await enqueueDelivery(this.tools.boss, tx, { messageId: message.id, manual: true });
      return message;
    });
  }

  /** Refuses to hand a receiver events whose content the caller's credential may not read. */
  private requireEventScopes(events: readonly string[]): void {
    const missing = [...new Set(events.filter(isWebhookEventType).map((type) => WEBHOOK_EVENT_SCOPES[type]))]
      .filter((scope) => !hasScope(this.reach.caller, scope))
      .sort();
    if (!missing.length) return;
    const needing = events.filter((type) => isWebhookEventType(type) && missing.includes(WEBHOOK_EVENT_SCOPES[type]));
    throw new AppError(
      ErrorCode.FORBIDDEN,
      `Sending ${needing.slice(0, 3).join(', ')}${needing.length > 3 ? ', …' : ''} to a webhook needs ` +
        `the ${missing.join(' and ')} scope${missing.length > 1 ? 's' : ''}: a receiver reads what these events carry`,
    );
  }

  /** The brands a webhook is limited to: those asked for, all inside the reach; none asked: the reach itself (null for every brand). */
  private async checkBrands(brandIds: string[] | null | undefined): Promise<string[] | null> {
    const ids = [...new Set((brandIds ?? []).map((id) => id.trim().toLowerCase()))];
    if (!ids.length) return this.reach.brandIds ? [...this.reach.brandIds].sort() : null;
    if (ids.some((id) => !isUuid(id) || !this.reach.covers(id)))
      throw AppError.badInput('brandIds', 'must all be brands you reach');
    const owned = await this.em.count(Brand, { id: { $in: ids }, ownerId: this.reach.ownerId });
    if (owned !== ids.length) throw AppError.badInput('brandIds', 'must all be brands you reach');
    return ids.sort();
  }
}

function checkEvents(events: string[] | null | undefined): string[] {
  const names = [...new Set((events ?? []).map((name) => name.trim()))];
  if (!names.length) throw AppError.badInput('events', `must name at least one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  const unknown = names.filter((name) => !isWebhookEventType(name));
  if (unknown.length)
    throw AppError.badInput(
      'events',
      `${unknown.slice(0, 3).join(', ')} is not an event type (known: ${WEBHOOK_EVENT_TYPES.join(', ')})`,
    );
  return names.sort();
}

/** Two lists of the same items, in any order. */
function sameList(left: readonly string[], right: readonly string[]): boolean {
  const sorted = (list: readonly string[]) => [...list].sort().join('\n');
  return sorted(left) === sorted(right);
}
