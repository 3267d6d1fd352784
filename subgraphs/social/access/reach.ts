import { AppError, ErrorCode } from '#lib/errors.js';
import type { Principal } from '#lib/identity.js';

/**
 * Which data a caller may touch: always one owner's, and for an API key limited to some brands,
 * only those. Every service of a request is bound to the request's reach when its context is
 * made. A request without a caller has a reach too, and its first use throws UNAUTHENTICATED:
 * the shield refuses anonymous calls before any service runs, and this is the lock behind it.
 */
export class Reach {
  private constructor(private readonly principal: Principal | null) {}

  static of(principal: Principal | null): Reach {
    return new Reach(principal);
  }

  /** The signed-in caller. */
  get caller(): Principal {
    if (!this.principal) throw new AppError(ErrorCode.UNAUTHENTICATED, 'Authentication required');
    return this.principal;
  }

  get ownerId(): string {
    return this.caller.userId;
  }

  /** The brands an API key is limited to; null: every brand of the owner (`brand:*`, and every bearer token). */
  get brandIds(): ReadonlySet<string> | null {
    const caller = this.caller;
    return caller.via === 'api-key' ? (caller.brandIds ?? null) : null;
  }

  /** Every brand of the owner, and with them what belongs to the owner rather than to one brand. */
  get everyBrand(): boolean {
    return this.brandIds === null;
  }

  covers(brandId: string): boolean {
    const brandIds = this.brandIds;
    return brandIds === null || brandIds.has(brandId);
  }

  /** Whether a row read without the filter below lies inside the reach: the same rule, in memory. */
  allows(row: { ownerId: string; brandId: string }): boolean {
    return row.ownerId === this.ownerId && this.covers(row.brandId);
  }

  /** A MikroORM filter that keeps a query of rows with `ownerId` and `brandId` inside the reach. */
  filter(): { ownerId: string; brandId?: { $in: string[] } } {
    const brandIds = this.brandIds;
    return brandIds === null ? { ownerId: this.ownerId } : { ownerId: this.ownerId, brandId: { $in: [...brandIds] } };
  }
}
