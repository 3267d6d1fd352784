import type { EntityManager } from '#lib/data/database.js';
import { AppError } from '#lib/errors.js';
import { isUuid } from '#lib/ids.js';
import { byCreation, emptyConnection, keysetWindow, pageOfQuery, type KeysetArgs } from '#lib/data/keyset.js';
import type { Connection } from '#lib/data/pagination.js';
import type { BrandService } from '../access/brand.service.js';
import type { Reach } from '../access/reach.js';
import { Campaign } from './campaign.entity.js';
import { ContentEventType } from './content-event.entity.js';
import { actorOf, ContentEventService } from './content-event.service.js';
import type { CreateCampaignInput, UpdateCampaignInput } from './campaign.input.js';
import { Post, snapshotOf } from './post.entity.js';
import { assertCanApply } from './post.state.js';

const NEWEST_FIRST = byCreation<Campaign>('c', 'desc');

/** Campaigns: named groups of one brand's posts. Moving a post in or out is a post change, audited. */
export class CampaignService {
  constructor(
    private readonly em: EntityManager,
    private readonly reach: Reach,
    private readonly brands: BrandService,
  ) {}

  /** Newest first, as a keyset connection. */
  async connection(args: KeysetArgs, brandId?: string | null): Promise<Connection<Campaign>> {
    const window = keysetWindow(NEWEST_FIRST, args);
    const where: Record<string, unknown> = { ...this.reach.filter() };
    if (brandId) {
      // Naming a brand replaces the reach filter's brand list, so the brand itself must be in reach.
      if (!isUuid(brandId) || !this.reach.covers(brandId)) return emptyConnection();
      where.brandId = brandId;
    }
    const query = this.em.createQueryBuilder(Campaign, 'c').where(where);
    return pageOfQuery(query, NEWEST_FIRST, window, () => this.em.count(Campaign, where));
  }

  async find(id: string): Promise<Campaign | null> {
    if (!isUuid(id)) return null;
    return this.em.findOne(Campaign, { id, ...this.reach.filter() });
  }

  async get(id: string): Promise<Campaign> {
    const campaign = await this.find(id);
    if (!campaign) throw AppError.notFound('Campaign');
    return campaign;
  }

  async create(input: CreateCampaignInput): Promise<Campaign> {
    const name = input.name?.trim();
    if (!name) throw AppError.badInput('name', 'is required');
    return this.em.transactional(async (tx) => {
      const brand = await this.brands.brandForNewPost(tx, input.brandId);
      const campaign = new Campaign();
      campaign.ownerId = this.reach.ownerId;
      campaign.brandId = brand.id;
      campaign.name = name;
      campaign.description = input.description?.trim() || null;
      tx.persist(campaign);
      return campaign;
    });
  }

  async update(id: string, input: UpdateCampaignInput): Promise<Campaign> {
    const campaign = await this.get(id);
    if (input.brandId !== undefined && input.brandId !== campaign.brandId)
      throw AppError.badInput('brandId', 'a campaign stays with its brand');
    if (input.name !== undefined) {
      const name = input.name?.trim();
      if (!name) throw AppError.badInput('name', 'cannot be empty');
      campaign.name = name;
    }
    if (input.description !== undefined) campaign.description = input.description?.trim() || null;
    campaign.updatedAt = new Date();
    await this.em.flush();
    return campaign;
  }

  /** Deletes the campaign; its posts stay, outside any campaign (the foreign key sets null). */
  async delete(id: string): Promise<Campaign> {
    const campaign = await this.get(id);
    await this.em.remove(campaign).flush();
    return campaign;
  }

  /**
   * Puts a post into a campaign of its brand, or takes it out (`campaignId` null). Neither the
   * post's state nor its time changes, so its publish job stays where it is.
   */
  async setPostCampaign(postId: string, campaignId: string | null): Promise<Post> {
    return this.em.transactional(async (tx) => {
      const post = isUuid(postId) ? await tx.findOne(Post, { id: postId, ...this.reach.filter() }) : null;
      if (!post) throw AppError.notFound('Post');
      assertCanApply('update', post);
      let target: string | null = null;
      if (campaignId !== null) {
        const campaign = isUuid(campaignId)
          ? await tx.findOne(Campaign, { id: campaignId, ...this.reach.filter() })
          : null;
        if (!campaign) throw AppError.notFound('Campaign');
        if (campaign.brandId !== post.brandId)
          throw AppError.badInput('campaignId', 'belongs to another brand than the post');
        target = campaign.id;
      }
      if (post.campaignId === target) return post;
      const before = snapshotOf(post);
      post.campaignId = target;
      post.updatedAt = new Date();
      ContentEventService.record(tx, {
        post,
        type: ContentEventType.UPDATED,
        actor: actorOf(this.reach.caller),
        before,
      });
      return post;
    });
  }

  async postsOf(campaignIds: readonly string[]): Promise<Map<string, Post[]>> {
    const byCampaign = new Map<string, Post[]>(campaignIds.map((id) => [id, []]));
    const valid = campaignIds.filter(isUuid);
    if (!valid.length) return byCampaign;
    const posts = await this.em.find(
      Post,
      { campaignId: { $in: valid }, ...this.reach.filter() },
      { orderBy: { createdAt: 'desc', id: 'desc' } },
    );
    for (const post of posts) byCampaign.get(post.campaignId!)?.push(post);
    return byCampaign;
  }
}
