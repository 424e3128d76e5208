// The periods a leaderboard can be kept for, and where each one starts and ends. Every boundary
// is UTC: a day from midnight, an ISO 8601 week from Monday, a month from its first day. A
// period's id names it in its Redis keys and in answers, so it must be the same on every
// instance: it is computed from a time alone, never from anything stored.

export const PERIODS = ['all', 'daily', 'weekly', 'monthly'] as const;
export type Period = (typeof PERIODS)[number];
/** The periods that start again at a boundary (all-time never does). */
export type RollingPeriod = Exclude<Period, 'all'>;
export const ROLLING_PERIODS: readonly RollingPeriod[] = ['daily', 'weekly', 'monthly'];

export function isPeriod(raw: unknown): raw is Period {
  return typeof raw === 'string' && (PERIODS as readonly string[]).includes(raw);
}

export interface PeriodWindow {
  readonly period: Period;
  /** `all`, `2026-11-25`, `2026-W48`, `2026-11`. */
  readonly id: string;
  /** First ms of the period (0 for all-time). */
  readonly startMs: number;
  /** First ms after it (Infinity for all-time). */
  readonly endMs: number;
}

const DAY_MS = 86_400_000;
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function dayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** The ISO week-numbering year and week of the week starting at `monday` (UTC ms). */
function isoWeekOf(monday: number): { year: number; week: number } {
  // The week belongs to the year of its Thursday (ISO 8601).
  const thursday = new Date(monday + 3 * DAY_MS);
  const year = thursday.getUTCFullYear();
  const firstThursday = Date.UTC(year, 0, 1) + ((4 - new Date(Date.UTC(year, 0, 1)).getUTCDay() + 7) % 7) * DAY_MS;
  const week = Math.round((thursday.getTime() - firstThursday) / (7 * DAY_MS)) + 1;
  return { year, week };
}

/** The period of kind `period` that holds the instant `ms`. */
export function periodAt(period: Period, ms: number): PeriodWindow {
  switch (period) {
    case 'all':
      return { period, id: 'all', startMs: 0, endMs: Infinity };
    case 'daily': {
      const start = dayStart(ms);
      const d = new Date(start);
      return { period, id: `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`, startMs: start, endMs: start + DAY_MS };
    }
    case 'weekly': {
      const today = dayStart(ms);
      // getUTCDay: Sunday 0 ... Saturday 6; the week starts on Monday.
      const start = today - ((new Date(today).getUTCDay() + 6) % 7) * DAY_MS;
      const { year, week } = isoWeekOf(start);
      return { period, id: `${year}-W${pad(week)}`, startMs: start, endMs: start + 7 * DAY_MS };
    }
    case 'monthly': {
      const d = new Date(ms);
      const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
      const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
      return { period, id: `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}`, startMs: start, endMs: end };
    }
  }
}

/** The period before the one that holds `ms`. */
export function previousPeriod(period: RollingPeriod, ms: number): PeriodWindow {
  return periodAt(period, periodAt(period, ms).startMs - 1);
}

/**
 * How long, from `nowMs`, the keys of the period holding `nowMs` must live: to the end of the
 * period after it, so that a period stays readable as the previous one until the next boundary,
 * and is gone by itself after that.
 */
export function periodTtlMs(period: RollingPeriod, nowMs: number): number {
  const current = periodAt(period, nowMs);
  const next = periodAt(period, current.endMs);
  return Math.max(1, next.endMs - nowMs);
}

/** The period of an id as periodAt writes it (for imports), or undefined. */
export function periodOfId(period: RollingPeriod, id: string): PeriodWindow | undefined {
  let at: number;
  if (period === 'daily') {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(id);
    if (!m) return undefined;
    at = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  } else if (period === 'monthly') {
    const m = /^(\d{4})-(\d{2})$/.exec(id);
    if (!m) return undefined;
    at = Date.UTC(Number(m[1]), Number(m[2]) - 1, 1);
  } else {
    const m = /^(\d{4})-W(\d{2})$/.exec(id);
    if (!m) return undefined;
    // Week 1 holds January 4th; its Monday, plus the weeks before this one.
    const jan4 = Date.UTC(Number(m[1]), 0, 4);
    at = jan4 - ((new Date(jan4).getUTCDay() + 6) % 7) * DAY_MS + (Number(m[2]) - 1) * 7 * DAY_MS;
  }
  if (!Number.isFinite(at)) return undefined;
  const window = periodAt(period, at);
  // A date that does not exist (2026-02-30) or a week past the year's last comes back as another id.
  return window.id === id ? window : undefined;
}
