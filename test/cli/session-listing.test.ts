/** The session listing's pieces (src/cli/session-listing.ts, src/cli/relative-time.ts) without a process. */
import { describe, expect, it } from "vitest";
import { RELATIVE_DAYS_MAX, relativeTime } from "../../src/cli/relative-time.js";
import { FIRST_GOAL_CHARS, formatListing, type SessionListing } from "../../src/cli/session-listing.js";
import { textWidth } from "../../src/cli/view/width.js";

/** Local time, so calendar days are the reader's. */
const at = (day: number, hour: number, minute = 0) => new Date(2025, 2, day, hour, minute).getTime();

describe("relativeTime", () => {
  const now = at(20, 10, 30);
  it.each([
    [at(20, 10, 30) - 20_000, "just now"],
    [now + 5 * 60_000, "just now"],
    [at(20, 10, 27), "3 min ago"],
    [at(20, 9, 31), "59 min ago"],
    [at(20, 1, 0), "9 h ago"],
    [at(19, 23, 0), "yesterday"],
    [at(19, 0, 5), "yesterday"],
    [at(18, 23, 59), "2 days ago"],
    [at(8, 12), "12 days ago"],
    [new Date(2025, 0, 20, 12).getTime(), "59 days ago"],
    // From RELATIVE_DAYS_MAX (60) days on, the date itself.
    [new Date(2025, 0, 20 - (RELATIVE_DAYS_MAX - 59), 12).getTime(), "2025-01-19"],
  ])("%d → %s", (then, said) => {
    expect(relativeTime(then, now)).toBe(said);
  });

  it("23:50 seen at 00:10 is minutes ago, not yesterday", () => {
    expect(relativeTime(at(19, 23, 50), at(20, 0, 10))).toBe("20 min ago");
  });
});

describe("formatListing", () => {
  const now = at(20, 10, 30);
  const listing = (all: boolean): SessionListing => ({
    all,
    root: "/work/app",
    more: false,
    limit: 20,
    warnings: [],
    rows: [
      {
        number: 1,
        id: "repl-1742466000000-42",
        modified: at(20, 10, 27),
        messages: 12,
        firstUser: "fix the failing test\nin calc.py",
        project: "/work/app",
      },
      {
        number: 2,
        id: "cli-9",
        modified: at(19, 18),
        messages: 4,
        firstUser: "x".repeat(100),
        project: "/work/other",
      },
      { number: 3, id: "s", modified: at(8, 12), messages: 100, firstUser: "", project: undefined },
    ],
  });

  it("a header, aligned columns, relative times, the first goal on one line and cut; the active one marked", () => {
    const cut = `${"x".repeat(FIRST_GOAL_CHARS - 1)}…`;
    expect(formatListing(listing(false), { now, active: "cli-9" })).toBe(
      [
        "#   id                     modified     msgs  first goal",
        "1   repl-1742466000000-42  3 min ago      12  fix the failing test in calc.py",
        `2*  cli-9                  yesterday       4  ${cut}`,
        "3   s                      12 days ago   100  -",
        "",
      ].join("\n"),
    );
  });

  it("--all adds the project column", () => {
    const lines = formatListing(listing(true), { now }).split("\n");
    expect(lines[0]).toBe("#   id                     modified     msgs  project      first goal");
    expect(lines[1]).toBe(
      "1   repl-1742466000000-42  3 min ago      12  /work/app    fix the failing test in calc.py",
    );
    expect(lines[3]).toBe("3   s                      12 days ago   100  -            -");
  });

  it("on a terminal, rows fit its width: the first goal is cut shorter, then columns give way", () => {
    const fits = (text: string, width: number) => {
      for (const l of text.trimEnd().split("\n")) expect(textWidth(l), l).toBeLessThanOrEqual(width);
    };
    // 79 columns: every column stays, the first goal is cut to what is left.
    const wide = formatListing(listing(false), { now, width: 79 });
    fits(wide, 79);
    expect(wide.split("\n")[0]).toBe("#   id                     modified     msgs  first goal");
    expect(wide).toContain("fix the failing test in calc.py");
    expect(wide.split("\n")[2]).toMatch(/x…$/);
    // Narrower: the message count goes first, then the time; the number and the id stay.
    const narrow = formatListing(listing(false), { now, width: 64 });
    fits(narrow, 64);
    expect(narrow.split("\n")[0]).toBe("#   id                     modified     first goal");
    const narrower = formatListing(listing(false), { now, width: 45 });
    fits(narrower, 45);
    expect(narrower.split("\n")[0]).toBe("#   id                     first goal");
    expect(narrower.split("\n")[1]).toMatch(/^1 {3}repl-1742466000000-42 {2}fix the fail/);
    // --all: the project is shortened from the left before anything is dropped.
    const deep = {
      ...listing(true),
      rows: listing(true).rows.map((r) => ({ ...r, project: `/home/someone/src${r.project ?? ""}` })),
    };
    const all = formatListing(deep, { now, width: 90 });
    fits(all, 90);
    expect(all.split("\n")[0]).toMatch(/^# +id +modified +msgs +project +first goal$/);
    expect(all).toMatch(/ …[a-z/]*work\/other /);
    const allNarrow = formatListing(deep, { now, width: 79 });
    fits(allNarrow, 79);
    expect(allNarrow.split("\n")[0]).toMatch(/^# +id +project +first goal$/);
    // A wide terminal changes nothing: the first goal is cut as on a pipe.
    expect(formatListing(listing(true), { now, width: 200 })).toBe(formatListing(listing(true), { now }));
  });
});
