import { describe, expect, it } from '@jest/globals';
import type { Principal } from '#lib/identity.js';
import { Reach } from '#subgraphs/social/access/reach.js';

const owner: Principal = { userId: 'owner-1', scopes: null, via: 'bearer' };
const brandKey: Principal = {
  userId: 'owner-1',
  scopes: null,
  via: 'api-key',
  apiKeyId: 'k1',
  brandIds: new Set(['b1']),
};

describe('a reach in memory (an event feed reads a post once for every subscriber)', () => {
  it('allows the rows its filter would find, and no other', () => {
    expect(Reach.of(owner).allows({ ownerId: 'owner-1', brandId: 'b2' })).toBe(true);
    expect(Reach.of(owner).allows({ ownerId: 'owner-2', brandId: 'b1' })).toBe(false);
    expect(Reach.of(brandKey).allows({ ownerId: 'owner-1', brandId: 'b1' })).toBe(true);
    expect(Reach.of(brandKey).allows({ ownerId: 'owner-1', brandId: 'b2' })).toBe(false);
    expect(Reach.of(brandKey).filter()).toEqual({ ownerId: 'owner-1', brandId: { $in: ['b1'] } });
    expect(() => Reach.of(null).allows({ ownerId: 'owner-1', brandId: 'b1' })).toThrow('Authentication required');
  });
});
