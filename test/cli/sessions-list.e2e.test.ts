/**
 * One session listing (docs/sessions.md "Listing sessions") through the built CLI: `scoot sessions
 * list` and the REPL's `/sessions` print the same table — a header, aligned columns, relative
 * times, this directory's sessions by default, `--all` with a project column, `--limit` — and
 * `/resume <n>` takes a number from it.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-list-home-", project: "scoot-list-a-", model: true });
let other: string;
beforeEach(() => {
  other = tempDir("scoot-list-b-");
});
afterEach(() => removeDir(other));

function scoot(args: string[], opts: { cwd?: string; input?: string } = {}) {
  return runCli(args, {
    home: scene.home,
    cwd: opts.cwd ?? scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.model.url },
    ...(opts.input !== undefined ? { input: opts.input } : {}),
  });
}

/** A local-time noon `days` before today: "yesterday", "12 days ago" whatever the hour now. */
function noonDaysAgo(days: number, hour = 12): Date {
  const d = new Date();
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() - days, hour);
}

/** Runs a goal in `cwd` and dates its transcript `when`; returns the session id. */
async function session(goal: string, cwd: string, when: Date): Promise<string> {
  scene.model.push(step("final", `answer to ${goal}`));
  const r = await scoot(["--json", "-e", goal], { cwd });
  expect(r.code, r.stderr).toBe(0);
  const id = JSON.parse(r.stdout).session_id as string;
  fs.utimesSync(path.join(scene.home, "state", "sessions", `${id}.jsonl`), when, when);
  return id;
}

/** The cells of a table line (columns are two or more spaces apart). */
const cells = (line: string) => line.trim().split(/\s{2,}/);

describe("scoot sessions list and /sessions", () => {
  it("this directory by default, --all with projects, --limit, --json: the same rows", async () => {
    const a1 = await session("goal A1", scene.project, noonDaysAgo(12));
    const a2 = await session("goal A2", scene.project, noonDaysAgo(1));
    const b = await session("goal B", other, noonDaysAgo(1, 11));

    const here = await scoot(["sessions", "list"]);
    expect(here.code, here.stderr).toBe(0);
    const lines = here.stdout.trimEnd().split("\n");
    expect(cells(lines[0]!)).toEqual(["#", "id", "modified", "msgs", "first goal"]);
    expect(lines.slice(1).map(cells)).toEqual([
      ["1", a2, "yesterday", "3", "goal A2"],
      ["2", a1, "12 days ago", "3", "goal A1"],
    ]);
    // Aligned: every column starts at the same place on every line.
    for (const word of ["id", "modified", "first goal"]) {
      const column = lines[0]!.indexOf(word);
      expect(lines[1]!.slice(column)).toMatch(/^\S/);
      expect(lines[2]!.slice(column)).toMatch(/^\S/);
    }
    expect(here.stderr).toBe("");

    const all = await scoot(["sessions", "list", "--all"]);
    const allLines = all.stdout.trimEnd().split("\n");
    expect(cells(allLines[0]!)).toEqual(["#", "id", "modified", "msgs", "project", "first goal"]);
    expect(allLines.slice(1).map(cells)).toEqual([
      ["1", a2, "yesterday", "3", fs.realpathSync(scene.project), "goal A2"],
      ["2", b, "yesterday", "3", fs.realpathSync(other), "goal B"],
      ["3", a1, "12 days ago", "3", fs.realpathSync(scene.project), "goal A1"],
    ]);

    const one = await scoot(["sessions", "list", "--limit", "1"]);
    expect(one.stdout.trimEnd().split("\n").slice(1).map(cells)).toEqual([
      ["1", a2, "yesterday", "3", "goal A2"],
    ]);
    expect(one.stderr).toBe(
      "older sessions not shown: scoot sessions list --limit 2 (--all: every project)\n",
    );

    const json = await scoot(["sessions", "list", "--json"]);
    expect((JSON.parse(json.stdout) as { id: string }[]).map((r) => r.id)).toEqual([a2, a1]);

    const none = await scoot(["sessions", "list"], { cwd: scene.home });
    expect(none.code).toBe(0);
    expect(none.stdout).toBe("");
    expect(none.stderr).toContain("scoot sessions list --all shows every project");

    for (const bad of ["0", "x", "-1"]) {
      const r = await scoot(["sessions", "list", `--limit=${bad}`]);
      expect(r.code, bad).toBe(2);
      expect(r.stderr).toContain(`--limit needs a whole number of at least 1, got "${bad}"`);
    }

    // The REPL's /sessions is the same table; /resume 2 is the second row of it.
    scene.model.push(step("final", "back in A1"));
    const repl = await scoot(["repl"], {
      input: "/sessions\n/resume 7\n/resume 0\n/resume 2\nwhat was it?\n/exit\n",
    });
    expect(repl.code, repl.stderr).toBe(0);
    expect(repl.stdout.startsWith(here.stdout)).toBe(true);
    expect(repl.stderr).toContain("scoot: no session numbered 7: this directory has 2 (see /sessions)");
    expect(repl.stderr).toContain("scoot: no session numbered 0: the listing counts from 1 (see /sessions)");
    expect(repl.stderr).toContain(`resumed session ${a1}`);
    const last = JSON.stringify(scene.model.completions().at(-1)!.body);
    expect(last).toContain("goal A1");
    expect(last).not.toContain("goal A2");
  });
});
