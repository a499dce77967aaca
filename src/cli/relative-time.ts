/**
 * When something happened, as a person says it: `just now`, `3 min ago`, `5 h ago`,
 * `yesterday`, `12 days ago`, and the date itself for anything older than two months. Days are
 * calendar days in local time, so a session from 23:50 seen at 00:10 is "20 min ago", one from
 * 22:00 seen the next morning is "yesterday".
 */

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** From this many days on the date says more than a count. */
export const RELATIVE_DAYS_MAX = 60;

/** Local midnight of the day `ms` falls in. */
function dayStart(ms: number): number {
  const d = new Date(ms);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
}

/** `YYYY-MM-DD` in local time. */
function localDate(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
}

/** The `now` last asked about and its day's start: a listing asks about one `now` for every row. */
let lastNow = Number.NaN;
let lastNowDay = 0;

function nowDayStart(now: number): number {
  if (now !== lastNow) {
    lastNowDay = dayStart(now);
    lastNow = now;
  }
  return lastNowDay;
}

export function relativeTime(then: number, now: number): string {
  const elapsed = now - then;
  // A time a little ahead (another machine's clock, a file touched since) is "just now".
  if (elapsed < MINUTE_MS) return "just now";
  const minutes = Math.floor(elapsed / MINUTE_MS);
  if (minutes < 60) return `${minutes} min ago`;
  // Rounded: a day with a daylight-saving change is 23 or 25 hours long.
  const days = Math.round((nowDayStart(now) - dayStart(then)) / DAY_MS);
  if (days <= 0) return `${Math.floor(minutes / 60)} h ago`;
  if (days === 1) return "yesterday";
  if (days < RELATIVE_DAYS_MAX) return `${days} days ago`;
  return localDate(then);
}
