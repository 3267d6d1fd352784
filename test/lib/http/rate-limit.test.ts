import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '#lib/config.js';
import { RateLimits } from '#lib/http/rate-limit.js';

const redisUrl = process.env.TEST_REDIS_URL;

describe('rate limits', () => {
  const opened: RateLimits[] = [];
  const open = (env: Record<string, string>) => {
    const limits = new RateLimits(loadConfig(env));
    opened.push(limits);
    return limits;
  };
  afterAll(async () => {
    for (const limits of opened) await limits.close();
  });

  it('answers RATE_LIMITED with the seconds to wait once the points are used', async () => {
    const limiter = open({}).limiter(`test-${randomUUID()}`, 2, 60);
    await limiter.consume('user-1');
    await limiter.consume('user-1');
    await expect(limiter.consume('user-1')).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      retryAfter: expect.any(Number),
    });
    await limiter.consume('user-2');
  });

  (redisUrl ? it : it.skip)('shares the count between replicas through Redis (REDIS_URL)', async () => {
    const name = `test-${randomUUID()}`;
    const replicaA = open({ REDIS_URL: redisUrl! }).limiter(name, 3, 60);
    const replicaB = open({ REDIS_URL: redisUrl! }).limiter(name, 3, 60);
    await replicaA.consume('user-1');
    await replicaB.consume('user-1');
    await replicaA.consume('user-1');
    const error = await replicaB.consume('user-1').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'RATE_LIMITED' });
    expect((error as { retryAfter: number }).retryAfter).toBeGreaterThan(0);
    expect((error as { retryAfter: number }).retryAfter).toBeLessThanOrEqual(60);
  });
});
