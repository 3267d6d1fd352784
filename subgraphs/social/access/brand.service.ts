import type { EntityManager } from '#lib/data/database.js';
import { AppError } from '#lib/errors.js';
import { isUuid } from '#lib/ids.js';
import { byCreation, keysetWindow, pageOfQuery, type KeysetArgs } from '#lib/data/keyset.js';
import type { Connection, Slice, Window } from '#lib/data/pagination.js';
import { checkTimezone } from '#lib/time.js';
import { Brand } from './brand.entity.js';
import type { BrandInput, BrandSettingsInput } from './brand.input.js';
import type { BrandSettings } from './brand.types.js';
import type { Reach } from './reach.js';

export const DEFAULT_BRAND_NAME = 'My brand';

const OLDEST_FIRST = byCreation<Brand>('b', 'asc');

/** Brands in the caller's reach, and what a post needs to know about them. */
export class BrandService {
  constructor(
    private readonly em: EntityManager,
    private readonly reach: Reach,
  ) {}

  private where(): Record<string, unknown> {
    const brandIds = this.reach.brandIds;
    return brandIds === null
      ? { ownerId: this.reach.ownerId }
      : { ownerId: this.reach.ownerId, id: { $in: [...brandIds] } };
  }

  /** Oldest first, as a keyset connection. */
  async connection(args: KeysetArgs): Promise<Connection<Brand>> {
    const window = keysetWindow(OLDEST_FIRST, args);
    const where = this.where();
    const query = this.em.createQueryBuilder(Brand, 'b').where(where);
    return pageOfQuery(query, OLDEST_FIRST, window, () => this.em.count(Brand, where));
  }

  /** Oldest first, a numbered page (the REST list). */
  async list(window: Window): Promise<Slice<Brand>> {
    const [items, total] = await this.em.findAndCount(Brand, this.where(), {
      orderBy: { createdAt: 'asc', id: 'asc' },
      limit: window.limit,
      offset: window.offset,
    });
    return { items, total };
  }

  async find(id: string): Promise<Brand | null> {
    if (!isUuid(id) || !this.reach.covers(id)) return null;
    return this.em.findOne(Brand, { id, ownerId: this.reach.ownerId });
  }

  async get(id: string): Promise<Brand> {
    const brand = await this.find(id);
    if (!brand) throw AppError.notFound('Brand');
    return brand;
  }

  async findMany(ids: readonly string[]): Promise<Map<string, Brand>> {
    const valid = ids.filter((id) => isUuid(id) && this.reach.covers(id));
    const found = valid.length ? await this.em.find(Brand, { id: { $in: valid }, ownerId: this.reach.ownerId }) : [];
    return new Map(found.map((brand) => [brand.id, brand]));
  }

  async create(input: BrandInput): Promise<Brand> {
    const name = input.name?.trim();
    if (!name) throw AppError.badInput('name', 'is required');
    const brand = this.build(name);
    if (input.timezone) brand.timezone = checkTimezone(input.timezone);
    await this.em.persist(brand).flush();
    return brand;
  }

  /**
   * The brand a new post goes to: the one named (it must be in reach), else the caller's only
   * brand; a user with no brand yet gets one made for them (in `tx`, with the post), because a
   * person writing a first post expects it to work. With several brands the caller must choose.
   */
  async brandForNewPost(tx: EntityManager, brandId: string | null | undefined): Promise<Brand> {
    if (brandId !== undefined && brandId !== null) {
      const brand =
        isUuid(brandId) && this.reach.covers(brandId)
          ? await tx.findOne(Brand, { id: brandId, ownerId: this.reach.ownerId })
          : null;
      if (!brand) throw AppError.badInput('brandId', 'is not one of your brands');
      return brand;
    }
    const find = () => tx.find(Brand, this.where(), { limit: 2, orderBy: { createdAt: 'asc', id: 'asc' } });
    let brands = await find();
    if (!brands.length && this.reach.everyBrand) {
      // Two first posts at once must not make two default brands: the first takes the owner's lock, the second then sees its brand.
      await tx
        .getConnection()
        .execute(
          'select pg_advisory_xact_lock(hashtext(?))',
          [`social.brand:${this.reach.ownerId}`],
          'all',
          tx.getTransactionContext(),
        );
      brands = await find();
    }
    if (brands.length === 1) return brands[0];
    if (brands.length > 1 || !this.reach.everyBrand)
      throw AppError.badInput('brandId', 'is required: you have several brands');
    const brand = this.build(DEFAULT_BRAND_NAME);
    // Ids are plain columns, not ORM relations, so the brand row must exist before the post's.
    await tx.persist(brand).flush();
    return brand;
  }

  settingsOf(brand: Brand): BrandSettings {
    return {
      brandId: brand.id,
      timezone: brand.timezone,
      defaultPostingTimes: brand.defaultPostingTimes,
      updatedAt: brand.updatedAt,
    };
  }

  async updateSettings(brandId: string, input: BrandSettingsInput): Promise<BrandSettings> {
    const brand = await this.get(brandId);
    if (input.timezone !== undefined) {
      if (input.timezone === null) throw AppError.badInput('timezone', 'cannot be null');
      brand.timezone = checkTimezone(input.timezone);
    }
    if (input.defaultPostingTimes !== undefined) {
      brand.defaultPostingTimes = [...new Set(input.defaultPostingTimes ?? [])].sort();
    }
    brand.updatedAt = new Date();
    await this.em.flush();
    return this.settingsOf(brand);
  }

  private build(name: string): Brand {
    const brand = new Brand();
    brand.ownerId = this.reach.ownerId;
    brand.name = name;
    return brand;
  }
}
