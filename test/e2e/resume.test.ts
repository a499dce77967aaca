/**
 * Resuming sessions (issue 13, docs/sessions.md "Resuming a session") through the CLI and the
 * scripted server: `-e`, then `--resume`, then `--continue` carry the earlier goals and
 * answers; one transcript; three run ids; refusals exit 2 naming the session; REPL commands;
 * `serve`'s `run {resume}`; bare `schedule` and `daemon`. Commands run in this process
 * (`runInProcess`) unless they read stdin (the REPL) or the case is about processes (a session
 * held by a live one, the first flow), which run the built CLI.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { auditEvents } from "../helpers/audit-file.js";
import { collect, removeDir, runCli, runInProcess, spawnCli, tempDir } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import type { ScriptItem } from "../helpers/scripted-server.js";
import { step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-home-", project: "scoot-proj-", model: true });

const final = (answer: string): ScriptItem => step("final", answer, "answering");

/** In this process, unless it reads stdin or `binary` asks for the built CLI in a process of its own. */
function scoot(args: string[], opts: { cwd?: string; input?: string; binary?: boolean } = {}) {
  const common = {
    home: scene.home,
    cwd: opts.cwd ?? scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.model.url },
  };
  if (opts.input !== undefined) return runCli(args, { ...common, input: opts.input });
  return opts.binary ? runCli(args, common) : runInProcess(args, common);
}

const sessionsDir = () => path.join(scene.home, "state", "sessions");
/** All message contents the server received in completion request `i`, joined. */
function requestText(i: number): string {
  const body = scene.model.completions()[i]!.body as { messages: { content: string }[] };
  return body.messages.map((m) => m.content).join("\n---\n");
}

describe("-e, --resume, --continue", () => {
  it("each later request carries the earlier goals and answers; one transcript; three run ids", async () => {
    scene.model.push(final("first answer ALPHA"), final("second answer BETA"), final("third answer GAMMA"));
    const one = await scoot(["--json", "-e", "goal one: remember ALPHA"], { binary: true });
    expect(one.code).toBe(0);
    const id = JSON.parse(one.stdout).session_id as string;

    const two = await scoot(["--json", "--resume", id, "-e", "goal two"], { binary: true });
    expect(two.code).toBe(0);
    expect(JSON.parse(two.stdout)).toMatchObject({ session_id: id, answer: "second answer BETA" });
    const req2 = requestText(1);
    expect(req2).toContain("goal one: remember ALPHA");
    expect(req2).toContain("first answer ALPHA");
    expect(req2).toContain("goal two");

    const three = await scoot(["--continue", "-e", "goal three"], { binary: true });
    expect(three.code).toBe(0);
    expect(three.stdout).toBe("third answer GAMMA\n");
    const req3 = requestText(2);
    for (const t of [
      "goal one: remember ALPHA",
      "first answer ALPHA",
      "goal two",
      "second answer BETA",
      "goal three",
    ]) {
      expect(req3).toContain(t);
    }
    // One system prompt at the head of each request: the resumed history does not repeat it.
    const body3 = scene.model.completions()[2]!.body as { messages: { role: string }[] };
    expect(body3.messages.filter((m) => m.role === "system")).toHaveLength(1);

    // One transcript holds all three runs.
    const transcripts = fs.readdirSync(sessionsDir()).filter((f) => f.endsWith(".jsonl"));
    expect(transcripts).toEqual([`${id}.jsonl`]);
    const transcript = fs.readFileSync(path.join(sessionsDir(), `${id}.jsonl`), "utf8");
    for (const t of ["goal one", "goal two", "goal three", "third answer GAMMA"])
      expect(transcript).toContain(t);

    // Three distinct run ids; the later two name the session they resumed.
    const runs = auditEvents(scene.home).filter((e) => e.kind === "run");
    expect(runs).toHaveLength(3);
    expect(new Set(runs.map((e) => e.run_id)).size).toBe(3);
    expect(runs.every((e) => e.session_id === id)).toBe(true);
    expect(runs[0]!.msg).toBe("goal: goal one: remember ALPHA");
    expect(runs[1]!.msg).toBe(`goal: goal two (resumes session ${id})`);
    expect(runs[2]!.msg).toBe(`goal: goal three (resumes session ${id})`);

    // sessions list shows the project the session was started in.
    const list = await scoot(["sessions", "list", "--json"]);
    const rows = JSON.parse(list.stdout) as { id: string; project: string }[];
    expect(rows).toEqual([expect.objectContaining({ id, project: fs.realpathSync(scene.project) })]);
    const plain = await scoot(["sessions", "list", "--all"]);
    expect(plain.stdout).toMatch(
      new RegExp(`^1 +${id} +.* ${fs.realpathSync(scene.project)} +goal one`, "m"),
    );
  });

  it("--resume and --continue say on stderr which session they continue, its goals and when it last changed", async () => {
    scene.model.push(final("one"), final("two"), final("three"));
    const one = await scoot(["--json", "-e", "first goal"]);
    const id = JSON.parse(one.stdout).session_id as string;
    expect(one.stderr).not.toContain("continuing");
    const transcript = path.join(sessionsDir(), `${id}.jsonl`);
    /** Local noon `days` ago: the relative time does not depend on the hour the test runs. */
    const noon = (days: number) => {
      const d = new Date();
      return new Date(d.getFullYear(), d.getMonth(), d.getDate() - days, 12);
    };
    fs.utimesSync(transcript, noon(1), noon(1));
    const two = await scoot(["--json", "--resume", id, "-e", "second goal"]);
    expect(two.code, two.stderr).toBe(0);
    expect(two.stderr).toBe(`continuing session ${id} (1 goal, last yesterday)\n`);
    expect(JSON.parse(two.stdout).session_id).toBe(id);

    fs.utimesSync(transcript, noon(12), noon(12));
    const three = await scoot(["--continue", "-e", "third goal"]);
    expect(three.stderr).toBe(`continuing session ${id} (2 goals, last 12 days ago)\n`);
    expect(three.stdout).toBe("three\n");

    // The REPL says it too, before its prompt.
    fs.utimesSync(transcript, noon(3), noon(3));
    const repl = await scoot(["--continue"], { input: "/exit\n" });
    expect(repl.code, repl.stderr).toBe(0);
    expect(repl.stderr.split("\n")[0]).toBe(`continuing session ${id} (3 goals, last 3 days ago)`);
  });

  it("--continue picks the latest session of this directory, not another project's", async () => {
    const other = tempDir("scoot-other-");
    try {
      scene.model.push(final("here"), final("there"), final("continued here"));
      const mine = await scoot(["--json", "-e", "mine"]);
      const theirs = await scoot(["--json", "-e", "theirs"], { cwd: other });
      expect(theirs.code).toBe(0);
      const r = await scoot(["--json", "--continue", "-e", "more"]);
      expect(JSON.parse(r.stdout).session_id).toBe(JSON.parse(mine.stdout).session_id);
      expect(requestText(2)).toContain("mine");
      expect(requestText(2)).not.toContain("theirs");
    } finally {
      removeDir(other);
    }
  });

  it.each([
    [["--resume", "no-such-session", "-e", "x"], /no session "no-such-session" to resume/],
    [["--resume", "../etc", "-e", "x"], /invalid session id "..\/etc"/],
    [["--continue", "-e", "x"], /no session to continue in .*scoot-proj-/],
    [["--resume", "a", "--continue", "-e", "x"], /either --resume <id> or --continue/],
    [["--resume", "a", "--session-id", "b", "-e", "x"], /--session-id cannot be combined with --resume/],
  ])("refusals exit 2: %j", async (args, message) => {
    const r = await scoot(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(scene.model.completions()).toHaveLength(0);
  });

  it("a session in use by a live process is refused with exit 2; a stale marker is taken over", async () => {
    scene.model.push(final("one"), final("two"));
    const one = await scoot(["--json", "-e", "first"], { binary: true });
    const id = JSON.parse(one.stdout).session_id as string;
    // A live process other than the CLI holds it (this test process's parent stands in).
    // The transcript lock's owner token is "<pid> <nonce>" (src/core/lock.ts).
    const marker = path.join(sessionsDir(), `${id}.jsonl.lock`);
    fs.writeFileSync(marker, `${process.pid} 7e57\n`);
    const busy = await scoot(["--resume", id, "-e", "second"], { binary: true });
    expect(busy.code).toBe(2);
    expect(busy.stderr).toMatch(
      new RegExp(`session "${id}" is in use by a live run \\(pid ${process.pid}\\)`),
    );
    expect(scene.model.completions()).toHaveLength(1);
    // A pid that no longer runs: stale, taken over, and released at the end.
    fs.writeFileSync(marker, "999999999 7e57\n");
    const ok = await scoot(["--resume", id, "-e", "second"], { binary: true });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe("two\n");
    expect(fs.existsSync(marker)).toBe(false);
  });
});

describe("a session in use by a real running scoot", () => {
  it("a second process is refused with exit 2 while the first runs; afterwards it resumes", async () => {
    scene.model.push({ hang: true }, final("after the wait"));
    const first = spawnCli(["--session-id", "busy-one", "-e", "wait for the model"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.model.url, SCOOT_BACKEND_MAX_RETRIES: "0" },
    });
    const firstDone = collect(first);
    // The first run has written its goal and is waiting on the (hanging) backend.
    const transcript = path.join(sessionsDir(), "busy-one.jsonl");
    for (let i = 0; i < 200 && scene.model.completions().length === 0; i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(fs.readFileSync(transcript, "utf8")).toContain("wait for the model");

    const busy = await scoot(["--resume", "busy-one", "-e", "me too"], { binary: true });
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain(`session "busy-one" is in use by a live run (pid ${first.pid})`);
    const sameId = await scoot(["--session-id", "busy-one", "-e", "me too"], { binary: true });
    expect(sameId.code).toBe(2);
    expect(sameId.stderr).toContain("is in use");

    first.kill("SIGINT");
    expect((await firstDone).code).toBe(130);
    const later = await scoot(["--resume", "busy-one", "-e", "now"], { binary: true });
    expect(later.code, later.stderr).toBe(0);
    expect(later.stdout).toBe("after the wait\n");
  });
});

describe("REPL commands", () => {
  it("/help, /sessions, /new and /resume <id> switch sessions and bring the history back", async () => {
    scene.model.push(final("A1"), final("B1"), final("A2"));
    const first = await scoot(["--json", "-e", "goal in A"]);
    const a = JSON.parse(first.stdout).session_id as string;
    const input = [
      "/help",
      "/sessions",
      "goal in repl",
      "/new",
      "/resume nope",
      `/resume ${a}`,
      "back in A",
      "/exit",
      "",
    ].join("\n");
    const r = await scoot(["repl"], { input });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("/resume <n|id>");
    expect(r.stdout).toMatch(new RegExp(`^1 +${a} +.+ +3 +goal in A$`, "m"));
    expect(r.stdout).toContain("B1\n");
    expect(r.stdout).toContain("A2\n");
    expect(r.stderr).toMatch(/new session repl-/);
    expect(r.stderr).toContain('no session "nope" to resume');
    expect(r.stderr).toContain(`resumed session ${a}`);
    // The goal after /resume saw session A's history, not the REPL's first goal.
    const last = requestText(2);
    expect(last).toContain("goal in A");
    expect(last).toContain("A1");
    expect(last).not.toContain("goal in repl");
    expect(last).toContain("back in A");
  });

  it("scoot --resume <id> opens the REPL in that session", async () => {
    scene.model.push(final("A1"), final("A2"));
    const first = await scoot(["--json", "-e", "goal in A"]);
    const a = JSON.parse(first.stdout).session_id as string;
    const r = await scoot(["--resume", a], { input: "more in A\n" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("A2\n");
    expect(requestText(1)).toContain("goal in A");
    expect(requestText(1)).toContain("more in A");
  });

  it("a goal that starts with a slash but is not a command is a goal", async () => {
    scene.model.push(final("tmp is a directory"));
    const r = await scoot(["repl"], { input: "/tmp is what?\n" });
    expect(r.stdout).toBe("tmp is a directory\n");
    expect(requestText(0)).toContain("/tmp is what?");
  });
});

describe("serve run {resume}", () => {
  it("continues the named session; an unknown one is not_found", async () => {
    scene.model.push(final("first"), final("second"));
    const one = await scoot(["--json", "-e", "served goal one"]);
    const id = JSON.parse(one.stdout).session_id as string;
    const child = spawnCli(["serve"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.model.url },
    });
    const lines = [
      { id: 1, method: "run", params: { goal: "served goal two", resume: id } },
      { id: 2, method: "run", params: { goal: "x", resume: "missing-one" } },
    ];
    const r = await collect(child, { input: `${lines.map((l) => JSON.stringify(l)).join("\n")}\n` });
    const replies = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l)) as {
      id: number;
      result?: Record<string, unknown>;
      error?: { code: string; message: string };
    }[];
    const byId = new Map(replies.map((x) => [x.id, x]));
    expect(byId.get(1)!.result).toMatchObject({ session_id: id, reply: "second" });
    expect(byId.get(2)!.error).toMatchObject({ code: "not_found" });
    expect(byId.get(2)!.error?.message).toContain('"missing-one"');
    expect(requestText(1)).toContain("served goal one");
  });
});

describe("bare command words", () => {
  it("scoot schedule = schedule list, scoot daemon = daemon status", async () => {
    for (const [bare, full] of [
      [["schedule"], ["schedule", "list"]],
      [["daemon"], ["daemon", "status"]],
    ]) {
      const a = await scoot(bare!);
      const b = await scoot(full!);
      expect(a.code).toBe(b.code);
      expect(a.stdout).toBe(b.stdout);
      expect(a.stderr).toBe(b.stderr);
    }
  });
});
