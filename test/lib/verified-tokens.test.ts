import { describe, expect, it } from '@jest/globals';
import type { Principal } from '#lib/identity.js';
import { VerifiedTokens } from '#lib/verified-tokens.js';

const principal: Principal = { userId: 'u1', scopes: null, via: 'bearer' };

describe('verified tokens', () => {
  it('recalls a token until the earliest of its own end and a minute, then forgets it', () => {
    const tokens = new VerifiedTokens<Principal>();
    tokens.remember('short', principal, 10_000, 0);
    tokens.remember('long', principal, 3_600_000, 0);
    expect(tokens.recall('short', 9_999)).toBe(principal);
    expect(tokens.recall('short', 10_000)).toBeUndefined();
    expect(tokens.recall('long', 59_999)).toBe(principal);
    expect(tokens.recall('long', 60_000)).toBeUndefined();
    expect(tokens.recall('never verified', 0)).toBeUndefined();
  });
});
