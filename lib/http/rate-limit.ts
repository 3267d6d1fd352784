import cluster from 'node:cluster';
import { Redis } from 'ioredis';
import {
  RateLimiterCluster,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Config } from '../config.js';
import { AppError, ErrorCode } from '../errors.js';
import { rateLimitRefusals } from '../observability/metrics.js';

/**
 * Rate limits shared by all replicas when `REDIS_URL` is set (one Redis connection per process);
 * otherwise in memory, and in a worker of `npm start` in the memory of its primary process (over
 * IPC, `RateLimiterCluster`; the primary runs `RateLimiterClusterMaster`), so every worker counts
 * against one limit. `consume` throws RATE_LIMITED with the seconds to wait.
 */
const CONNECT_WAIT_MS = 2000;

export class RateLimits {
  private readonly redis?: Redis;
  /** Settles once Redis is connected (or gave up for now); see `RateLimiter.consume`. */
  private readonly connected: Promise<void> = Promise.resolve();

  constructor(config: Config) {
    if (config.env.REDIS_URL) {
      // No offline queue: while Redis is down, calls fall through to the in-memory insurance limiter
      // at once instead of waiting. Right after start that would split the count between replicas,
      // so the first calls wait (briefly) for the connection.
      const redis = new Redis(config.env.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      redis.on('error', () => undefined);
      this.connected = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, CONNECT_WAIT_MS);
        timer.unref();
        redis.once('ready', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      this.redis = redis;
    }
  }

  limiter(name: string, points: number, durationSeconds: number): RateLimiter {
    const options = { keyPrefix: `rl:${name}`, points, duration: durationSeconds };
    const limiter: RateLimiterAbstract = this.redis
      ? new RateLimiterRedis({ ...options, storeClient: this.redis, insuranceLimiter: new RateLimiterMemory(options) })
      : cluster.isWorker
        ? new RateLimiterCluster(options)
        : new RateLimiterMemory(options);
    return new RateLimiter(limiter, name, this.connected);
  }

  async close(): Promise<void> {
    if (!this.redis) return;
    await this.redis.quit().catch(() => undefined);
    this.redis.disconnect();
  }
}

export class RateLimiter {
  constructor(
    private readonly limiter: RateLimiterAbstract,
    private readonly name: string,
    private readonly connected: Promise<void>,
  ) {}

  /** Takes one point for `key`; over the limit throws RATE_LIMITED with `retryAfter` seconds. */
  async consume(key: string, message = 'Too many requests; try again later'): Promise<void> {
    await this.connected;
    try {
      await this.limiter.consume(key);
    } catch (result) {
      if (result instanceof RateLimiterRes) {
        rateLimitRefusals.inc({ limit: this.name });
        throw new AppError(ErrorCode.RATE_LIMITED, message, {
          retryAfter: Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
        });
      }
      throw result;
    }
  }

  /** Whether `key` still has points left, without taking one. */
  async remaining(key: string): Promise<number> {
    await this.connected;
    const result = await this.limiter.get(key);
    return result ? Math.max(0, result.remainingPoints) : Number.POSITIVE_INFINITY;
  }

  toString(): string {
    return `RateLimiter(${this.name})`;
  }
}
