import cluster from 'node:cluster';
import { Redis } from 'ioredis';
import {
  RateLimiterCluster,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Request } from 'express';
import { z } from 'zod';
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
    return new RateLimiter(limiter, { policy: name, quota: points, windowSeconds: durationSeconds }, this.connected);
  }

  async close(): Promise<void> {
    if (!this.redis) return;
    await this.redis.quit().catch(() => undefined);
    this.redis.disconnect();
  }
}

/** Where a limit stands for one caller after a request, as the `RateLimit` headers state it. */
export const rateLimitStateSchema = z
  .object({
    /** The limit's name: the policy identifier of the headers. */
    policy: z.string().min(1).max(100),
    quota: z.int().min(0),
    windowSeconds: z.int().min(1),
    remaining: z.int().min(0),
    /** Seconds until the quota is whole again. */
    resetSeconds: z.int().min(0),
  })
  .strict();
export type RateLimitState = z.infer<typeof rateLimitStateSchema>;

/** Told where a limit stands each time a point is asked for, taken or refused. */
export type RateLimitReport = (state: RateLimitState) => void;

/**
 * The answer extension in which a subgraph states where the limits its operation counted stand
 * (`RateLimitState[]`): the gateway gathers them from every subgraph into its own answer's
 * extensions under the same name, and the REST adapters turn them into `RateLimit` headers.
 */
export const RATE_LIMIT_EXTENSION = 'rateLimit';

export const rateLimitStatesSchema = z.array(rateLimitStateSchema).max(20);

/** A report that adds each state to an answer's extensions (`RATE_LIMIT_EXTENSION`), the way a subgraph sends them on. */
export function reportInto(answerExtensions: Record<string, unknown>): RateLimitReport {
  return (state) => {
    const states = (answerExtensions[RATE_LIMIT_EXTENSION] ??= []) as RateLimitState[];
    states.push(state);
  };
}

/**
 * `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers-09, structured-field
 * lists of quoted policy names with `q`/`w` and `r`/`t`) for the limits a request counted; one
 * member per policy, its latest state.
 */
export function rateLimitHeaders(states: readonly RateLimitState[]): Record<string, string> {
  const latest = new Map(states.map((state) => [state.policy, state]));
  if (!latest.size) return {};
  const policies = [...latest.values()];
  return {
    'ratelimit-policy': policies.map((s) => `"${s.policy}";q=${s.quota};w=${s.windowSeconds}`).join(', '),
    ratelimit: policies.map((s) => `"${s.policy}";r=${s.remaining};t=${s.resetSeconds}`).join(', '),
  };
}

/**
 * A rate limit a REST route counts itself, before its handler: one point per request for the key
 * the request gives (the client address...). Routes whose limit a subgraph counts say `'subgraph'`
 * instead; both send the `RateLimit` headers (lib/rest.ts).
 */
export type RouteRateLimit = { limiter: RateLimiter; keyOf: (req: Request) => string; message: string } | 'subgraph';

interface RateLimitPolicy {
  policy: string;
  quota: number;
  windowSeconds: number;
}

export class RateLimiter {
  constructor(
    private readonly limiter: RateLimiterAbstract,
    private readonly policy: RateLimitPolicy,
    private readonly connected: Promise<void>,
  ) {}

  /**
   * Takes one point for `key`; over the limit throws RATE_LIMITED with `retryAfter` seconds. Either
   * way `report` hears where the limit stands, counted by the same store.
   */
  async consume(key: string, message = 'Too many requests; try again later', report?: RateLimitReport): Promise<void> {
    await this.connected;
    try {
      const taken = await this.limiter.consume(key);
      report?.(this.stateOf(taken));
    } catch (result) {
      if (result instanceof RateLimiterRes) {
        report?.(this.stateOf(result));
        rateLimitRefusals.inc({ limit: this.policy.policy });
        throw new AppError(ErrorCode.RATE_LIMITED, message, {
          retryAfter: Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
        });
      }
      throw result;
    }
  }

  private stateOf(result: RateLimiterRes): RateLimitState {
    return {
      ...this.policy,
      remaining: Math.max(0, result.remainingPoints),
      resetSeconds: Math.max(0, Math.ceil(result.msBeforeNext / 1000)),
    };
  }

  /** Whether `key` still has points left, without taking one. */
  async remaining(key: string): Promise<number> {
    await this.connected;
    const result = await this.limiter.get(key);
    return result ? Math.max(0, result.remainingPoints) : Number.POSITIVE_INFINITY;
  }

  toString(): string {
    return `RateLimiter(${this.policy.policy})`;
  }
}
