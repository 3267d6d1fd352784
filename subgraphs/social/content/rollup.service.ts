import { QueryOrder } from '@mikro-orm/core';
import type { EntityManager } from '#lib/data/database.js';
import { AppError } from '#lib/errors.js';
import { checkCalendarDate, checkTimezone, datesBetween, localDateOf } from '#lib/time.js';
import type { Reach } from '../access/reach.js';
import { POST_STATUSES, Post } from './post.entity.js';
import { postsWhere } from './post.service.js';
import type { DailyRollups } from './rollup.types.js';

const MAX_ROLLUP_DAYS = 366;

export interface DailyRollupArgs {
  from?: string | null;
  to?: string | null;
  timezone?: string | null;
  brandId?: string | null;
}

/** Counts of the caller's posts per calendar day, by status and by platform (the analytics of content operations). */
export class RollupService {
  constructor(
    private readonly em: EntityManager,
    private readonly reach: Reach,
  ) {}

  /**
   * One rollup per calendar day of `timezone` from `from` to `to` (both included), each day present
   * even when empty. A post counts on the day it is scheduled for, or was created when it has no
   * time. Keys are sorted and every status is listed, so the same data gives the same JSON bytes.
   */
  async daily(args: DailyRollupArgs): Promise<DailyRollups> {
    const timezone = checkTimezone(args.timezone ?? 'UTC');
    const today = localDateOf(new Date(), timezone);
    const to = args.to ? checkCalendarDate(args.to, 'to') : today;
    const from = args.from ? checkCalendarDate(args.from, 'from') : shiftDate(to, -6);
    if (from > to) throw AppError.badInput('from', 'must not be after to');
    const dates = datesBetween(from, to);
    if (dates.length > MAX_ROLLUP_DAYS)
      throw AppError.badInput('to', `the range may span at most ${MAX_ROLLUP_DAYS} days`);

    const days = new Map(
      dates.map((date) => [
        date,
        { total: 0, byStatus: new Map<string, number>(), byPlatform: new Map<string, number>() },
      ]),
    );
    const where = postsWhere(this.reach, { brandId: args.brandId });
    if (where) {
      // Every zone is within a day of UTC, so a day either side catches every local day of the range.
      const lo = new Date(`${shiftDate(from, -1)}T00:00:00Z`);
      const hi = new Date(`${shiftDate(to, 2)}T00:00:00Z`);
      const rows = await this.em.find(
        Post,
        {
          ...where,
          $or: [{ scheduledAt: { $gte: lo, $lt: hi } }, { scheduledAt: null, createdAt: { $gte: lo, $lt: hi } }],
        },
        { fields: ['id', 'status', 'platforms', 'scheduledAt', 'createdAt'], orderBy: { id: QueryOrder.ASC } },
      );
      for (const row of rows) {
        const day = days.get(localDateOf(row.scheduledAt ?? row.createdAt, timezone));
        if (!day) continue;
        day.total += 1;
        day.byStatus.set(row.status, (day.byStatus.get(row.status) ?? 0) + 1);
        for (const platform of row.platforms) day.byPlatform.set(platform, (day.byPlatform.get(platform) ?? 0) + 1);
      }
    }
    const platforms = [...new Set([...days.values()].flatMap((day) => [...day.byPlatform.keys()]))].sort();
    return {
      timezone,
      from,
      to,
      days: dates.map((date) => {
        const day = days.get(date)!;
        return {
          date,
          total: day.total,
          byStatus: Object.fromEntries(
            [...POST_STATUSES].sort().map((status) => [status, day.byStatus.get(status) ?? 0]),
          ),
          byPlatform: Object.fromEntries(platforms.map((platform) => [platform, day.byPlatform.get(platform) ?? 0])),
        };
      }),
    };
  }
}

function shiftDate(date: string, days: number): string {
  const day = new Date(`${date}T00:00:00Z`);
  day.setUTCDate(day.getUTCDate() + days);
  return day.toISOString().slice(0, 10);
}
