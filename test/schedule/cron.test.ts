import { describe, expect, it } from "vitest";
import { cronEverFires, nextCronAfter, parseCron } from "../../src/schedule/cron.js";

const at = (iso: string) => Date.parse(iso);
const next = (expr: string, afterIso: string) => {
  const spec = parseCron(expr);
  if (!spec.ok) throw new Error(spec.error);
  const t = nextCronAfter(spec.value, at(afterIso));
  return t === undefined ? undefined : new Date(t).toISOString();
};

describe("cron: the next matching minute, in UTC, strictly after a time", () => {
  it.each([
    ["* * * * *", "2025-01-01T00:00:00.000Z", "2025-01-01T00:01:00.000Z"],
    ["* * * * *", "2025-01-01T00:00:30.000Z", "2025-01-01T00:01:00.000Z"],
    ["*/15 * * * *", "2025-01-01T00:07:00.000Z", "2025-01-01T00:15:00.000Z"],
    ["*/15 * * * *", "2025-01-01T00:45:00.000Z", "2025-01-01T01:00:00.000Z"],
    ["0 3 * * *", "2025-01-01T03:00:00.000Z", "2025-01-02T03:00:00.000Z"],
    ["30 9 1 * *", "2025-01-15T00:00:00.000Z", "2025-02-01T09:30:00.000Z"],
    ["0 0 * * 1", "2025-01-01T00:00:00.000Z", "2025-01-06T00:00:00.000Z"], // 2025-01-06 is a Monday
    ["0 0 * * 7", "2025-01-01T00:00:00.000Z", "2025-01-05T00:00:00.000Z"], // 7 is Sunday too
    ["0 0 * * 0", "2025-01-01T00:00:00.000Z", "2025-01-05T00:00:00.000Z"],
    ["0 12 * * 1-5", "2025-01-03T13:00:00.000Z", "2025-01-06T12:00:00.000Z"], // Fri after noon → Mon
    ["5,10,50 * * * *", "2025-01-01T00:10:00.000Z", "2025-01-01T00:50:00.000Z"],
    ["10-20/5 * * * *", "2025-01-01T00:16:00.000Z", "2025-01-01T00:20:00.000Z"],
    ["50/5 * * * *", "2025-01-01T00:56:00.000Z", "2025-01-01T01:50:00.000Z"],
    ["0 0 29 2 *", "2025-01-01T00:00:00.000Z", "2028-02-29T00:00:00.000Z"],
    ["0 0 31 * *", "2025-04-01T00:00:00.000Z", "2025-05-31T00:00:00.000Z"],
    // Both day fields restricted: either may match (classic cron).
    ["0 0 13 * 5", "2025-01-01T00:00:00.000Z", "2025-01-03T00:00:00.000Z"],
    // A day field starting with * makes the day fields combine with AND.
    ["0 0 */2 * 1", "2025-01-01T00:00:00.000Z", "2025-01-13T00:00:00.000Z"],
    ["59 23 31 12 *", "2025-12-31T23:59:00.000Z", "2026-12-31T23:59:00.000Z"],
  ])("%s after %s is %s", (expr, after, expected) => {
    expect(next(expr, after)).toBe(expected);
  });
});

describe("cron: only 5-field numeric expressions are accepted, with a clear reason", () => {
  it.each([
    ["", /empty/],
    ["0 0 * * * *", /6 fields; Scoot cron has no seconds field/],
    ["* * * *", /4 fields/],
    ["@daily", /nicknames .* not supported/],
    ["0 0 * JAN *", /month field "JAN": names are not supported; use numbers \(1-12\)/],
    ["0 0 * * MON", /day-of-week field "MON": names are not supported.*0 and 7 are Sunday/],
    ["0 0 ? * *", /"\?" and "#" are not supported/],
    ["0 0 L * *", /names are not supported/],
    ["60 * * * *", /minute field "60": 60 is outside 0-59/],
    ["* 24 * * *", /hour field .* outside 0-23/],
    ["* * 0 * *", /day-of-month field .* outside 1-31/],
    ["* * * 13 *", /month field .* outside 1-12/],
    ["* * * * 8", /day-of-week field .* outside 0-7/],
    ["10-5 * * * *", /runs backwards/],
    ["*/0 * * * *", /step must be at least 1/],
    ["1,,2 * * * *", /is not \*, a number/],
    ["-1 * * * *", /is not \*, a number/],
  ])("%j is refused", (expr, message) => {
    const r = parseCron(expr);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(message);
  });

  it("knows an expression that can never fire", () => {
    const feb30 = parseCron("0 0 30 2 *");
    expect(feb30.ok).toBe(true);
    if (feb30.ok) expect(cronEverFires(feb30.value)).toBe(false);
    const daily = parseCron("0 0 * * *");
    if (daily.ok) expect(cronEverFires(daily.value)).toBe(true);
  });
});
