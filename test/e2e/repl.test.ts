/** The REPL through the real CLI: stdin lines are goals in one session; /exit and EOF leave. */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { collect, removeDir, runCli, spawnCli, tempDir } from "../helpers/cli.js";
import { processesWith, uniqueSleepArg, waitForProcess } from "../helpers/procs.js";
import {
  type ScriptedServer,
  type ScriptItem,
  startScriptedServer,
  step,
} from "../helpers/scripted-server.js";

let home: string;
let server: ScriptedServer;
beforeEach(() => {
  home = tempDir();
});
afterEach(async () => {
  await server?.close();
  removeDir(home);
});

const final = (answer: string): ScriptItem => step("final", answer, "t");

describe("repl", () => {
  it("runs each line as a goal in one repl session, each goal its own run", async () => {
    server = await startScriptedServer([final("first answer"), final("second answer")]);
    const r = await runCli(["repl"], {
      home,
      env: { SCOOT_BACKEND_BASE_URL: server.url },
      input: "first goal\n\nsecond goal\n/exit\nnever run\n",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("first answer\nsecond answer\n");
    const files = fs.readdirSync(path.join(home, "state", "sessions")).filter((f) => f.endsWith(".jsonl"));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^repl-\d+-\d+\.jsonl$/);
    const events = fs
      .readFileSync(path.join(home, "logs", "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const runs = events.filter((e) => e.kind === "run");
    expect(runs.map((e) => e.msg)).toEqual(["goal: first goal", "goal: second goal"]);
    expect(new Set(events.map((e) => e.run_id)).size).toBe(2);
    // The second goal is sent with the first exchange as context.
    expect(JSON.stringify(server.completions()[1]!.body)).toContain("first goal");
  });
  it("leaves at end of input (Ctrl-D) with exit 0", async () => {
    server = await startScriptedServer([final("only")]);
    const r = await runCli([], { home, env: { SCOOT_BACKEND_BASE_URL: server.url }, input: "goal\n" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("only\n");
  });
  it("a failed goal is reported and the REPL goes on", async () => {
    server = await startScriptedServer([
      { status: 401, body: { error: { message: "nope" } } },
      final("recovered"),
    ]);
    const r = await runCli(["repl"], { home, env: { SCOOT_BACKEND_BASE_URL: server.url }, input: "a\nb\n" });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("401");
    expect(r.stdout).toBe("recovered\n");
  });
  it("Ctrl-C cancels the running goal only: its tool's process group dies and the next goal runs", async () => {
    // Found by a tag in its command line: sandboxed or not, the host sees its real pid.
    const sleepArg = uniqueSleepArg(300);
    server = await startScriptedServer([
      { reply: { thought: "t", action: "bash", action_input: `sleep ${sleepArg} & wait` } },
      final("second answer"),
    ]);
    const child = spawnCli(["repl"], { home, env: { SCOOT_BACKEND_BASE_URL: server.url } });
    child.stdin!.write("first goal\nsecond goal\n");
    const done = collect(child, { timeoutMs: 30_000 });
    expect(await waitForProcess(`sleep ${sleepArg}`, 10_000)).toBe(true);
    child.kill("SIGINT");
    const r = await done;
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/scoot: cancelled \(Ctrl-C\): stopped bash sleep \S+ & wait after \d+\.\ds/);
    expect(r.stdout).toBe("second answer\n");
    const left = processesWith(`sleep ${sleepArg}`);
    for (const pid of left) process.kill(pid, "SIGKILL");
    expect(left).toEqual([]);
    const kinds = fs
      .readFileSync(path.join(home, "logs", "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).kind);
    expect(kinds).toContain("system_error");
    expect(kinds.at(-1)).toBe("final");
  });
});
