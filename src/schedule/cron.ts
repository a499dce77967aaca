/**
 * Five-field cron in UTC: `minute hour day-of-month month day-of-week`, each field `*`, a
 * number, a range `a-b`, a step `*\/n`, `a-b/n` or `a/n`, or a comma list of those.
 *
 * A small parser of our own rather than a general cron library: the accepted language is
 * exactly what the spec promises, and everything else (seconds fields, names, `?`, `L`, `W`,
 * `#`, `@daily`) is refused with a message saying what to write instead — a job that silently
 * means something other than what its author read is worse than a job that does not start.
 *
 * Day matching follows classic cron: when both day fields are restricted (neither starts
 * with `*`), a day matches if *either* does; otherwise both must.
 */
import type { Result } from "../core/types.js";

const MINUTE_MS = 60_000;
/** The Gregorian calendar's weekday/leap pattern repeats within 28 years (1901–2099). */
const SEARCH_YEARS = 28;

interface FieldSpec {
  name: string;
  min: number;
  max: number;
}

const FIELDS: readonly FieldSpec[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day-of-month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  // 7 is accepted as a second spelling of Sunday, as in most crons.
  { name: "day-of-week", min: 0, max: 7 },
];

export interface CronSpec {
  source: string;
  minutes: boolean[];
  hours: boolean[];
  days: boolean[];
  months: boolean[];
  weekdays: boolean[];
  /** Whether the field was written starting with `*` (decides AND vs OR of the day fields). */
  daysStar: boolean;
  weekdaysStar: boolean;
}

const FORMAT_HINT = 'write 5 fields "minute hour day-of-month month day-of-week" in UTC, e.g. "*/15 * * * *"';

export function parseCron(expr: string): Result<CronSpec> {
  const source = expr.trim();
  if (source === "") return { ok: false, error: `cron is empty; ${FORMAT_HINT}` };
  if (source.startsWith("@")) {
    return {
      ok: false,
      error: `cron nicknames like "${source.split(/\s/)[0]}" are not supported; ${FORMAT_HINT}`,
    };
  }
  const parts = source.split(/\s+/);
  if (parts.length === 6) {
    return {
      ok: false,
      error: `cron "${source}" has 6 fields; Scoot cron has no seconds field: ${FORMAT_HINT}`,
    };
  }
  if (parts.length !== 5) {
    return { ok: false, error: `cron "${source}" has ${parts.length} fields; ${FORMAT_HINT}` };
  }
  const sets: boolean[][] = [];
  for (let i = 0; i < FIELDS.length; i++) {
    const field = parseField(parts[i]!, FIELDS[i]!);
    if (!field.ok) return { ok: false, error: `cron "${source}": ${field.error}` };
    sets.push(field.value);
  }
  const weekdays = sets[4]!;
  // Sunday may be written 0 or 7; match on 0 only.
  if (weekdays[7]) weekdays[0] = true;
  return {
    ok: true,
    value: {
      source,
      minutes: sets[0]!,
      hours: sets[1]!,
      days: sets[2]!,
      months: sets[3]!,
      weekdays,
      daysStar: parts[2]!.startsWith("*"),
      weekdaysStar: parts[4]!.startsWith("*"),
    },
  };
}

function parseField(text: string, spec: FieldSpec): Result<boolean[]> {
  const set: boolean[] = new Array(spec.max + 1).fill(false);
  const where = `${spec.name} field "${text}"`;
  if (/[A-Za-z]/.test(text)) {
    return {
      ok: false,
      error: `${where}: names are not supported; use numbers (${spec.min}-${spec.max}${
        spec.name === "day-of-week" ? ", 0 and 7 are Sunday" : ""
      })`,
    };
  }
  if (/[?#]/.test(text))
    return { ok: false, error: `${where}: "?" and "#" are not supported; use *, lists, ranges, steps` };
  for (const part of text.split(",")) {
    const m = /^(\*|\d+(?:-\d+)?)(?:\/(\d+))?$/.exec(part);
    if (!m) return { ok: false, error: `${where}: "${part}" is not *, a number, a range a-b, or a step x/n` };
    const [, base, stepText] = m;
    let lo = spec.min;
    let hi = spec.max;
    if (base !== "*") {
      const [a, b] = base!.split("-").map(Number);
      lo = a!;
      // "a/n" means from a to the end of the field, stepping n.
      hi = b !== undefined ? b : stepText !== undefined ? spec.max : a!;
    }
    if (lo < spec.min || hi > spec.max) {
      return { ok: false, error: `${where}: ${part} is outside ${spec.min}-${spec.max}` };
    }
    if (lo > hi) return { ok: false, error: `${where}: range ${part} runs backwards` };
    const step = stepText === undefined ? 1 : Number(stepText);
    if (step < 1) return { ok: false, error: `${where}: step must be at least 1` };
    for (let v = lo; v <= hi; v += step) set[v] = true;
  }
  return { ok: true, value: set };
}

function dayMatches(spec: CronSpec, d: Date): boolean {
  const dom = spec.days[d.getUTCDate()] === true;
  const dow = spec.weekdays[d.getUTCDay()] === true;
  if (spec.daysStar || spec.weekdaysStar) return dom && dow;
  return dom || dow;
}

/** The first matching minute strictly after `afterMs`, or undefined if none within the search window. */
export function nextCronAfter(spec: CronSpec, afterMs: number): number | undefined {
  let t = Math.floor(afterMs / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  const limit = afterMs + SEARCH_YEARS * 366 * 24 * 60 * MINUTE_MS;
  // Jump by the coarsest unit that does not match, so even a rare match costs only a few
  // thousand steps.
  while (t <= limit) {
    const d = new Date(t);
    const y = d.getUTCFullYear();
    const mo = d.getUTCMonth();
    const day = d.getUTCDate();
    const h = d.getUTCHours();
    if (!spec.months[mo + 1]) {
      t = Date.UTC(y, mo + 1, 1);
    } else if (!dayMatches(spec, d)) {
      t = Date.UTC(y, mo, day + 1);
    } else if (!spec.hours[h]) {
      t = Date.UTC(y, mo, day, h + 1);
    } else if (!spec.minutes[d.getUTCMinutes()]) {
      t += MINUTE_MS;
    } else {
      return t;
    }
  }
  return undefined;
}

/** A cron that can never fire (e.g. day 30 of February) is a mistake worth refusing. */
export function cronEverFires(spec: CronSpec): boolean {
  return nextCronAfter(spec, Date.UTC(2000, 0, 1)) !== undefined;
}
