/**
 * The outline tool parses in a grammar process of its own (src/tools/outline/grammar-process.ts):
 * on Node 24, V8's optimising WebAssembly compiler took a process that outlined a few languages
 * past a gigabyte and then ended it with "Fatal process out of memory: Zone". The first case runs
 * the real CLI through many outlines of many languages in one run; before the grammar process it
 * ended on Node 24 with that fatal error and no answer. The others hold the process's lifecycle:
 * one that dies costs one outline, and none is left behind.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  GRAMMAR_IDLE_MS,
  grammarProcessPid,
  setGrammarIdleMs,
  stopGrammarProcess,
} from "../../src/tools/outline/grammar-process.js";
import { outlineSource } from "../../src/tools/outline.js";
import { collect, needsBuiltCli, REPO_ROOT, spawnCli } from "../helpers/cli.js";
import { processesWith } from "../helpers/procs.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

const FIXTURES = path.join(REPO_ROOT, "test", "fixtures", "outline");
/** Each fixture repeated this many times: files of a few hundred lines, as real ones are. */
const REPEAT = 20;
/** Outlines of each language in the run. */
const ROUNDS = 2;
const GRAMMAR_SCRIPT = "scoot-grammar.mjs";
/** How long a grammar process may outlive its Scoot on a loaded machine before that is a leak. */
const LEAVE_GUARD_MS = 10_000;

const scene = useScene({ home: "scoot-outline-process-", project: "scoot-outline-process-project-" });

beforeAll(() => {
  needsBuiltCli("scoot.cjs", "scoot-app.cjs", GRAMMAR_SCRIPT);
});
afterEach(() => {
  stopGrammarProcess();
  setGrammarIdleMs(GRAMMAR_IDLE_MS);
});

describe("the grammar process", () => {
  it("a run that outlines every language twice, a few hundred lines each, answers (Node 24 died of a Zone OOM)", async () => {
    const files = fs.readdirSync(FIXTURES).map((n) => n.replace(/\.txt$/, ""));
    for (const f of files)
      fs.writeFileSync(
        path.join(scene.project, f),
        fs.readFileSync(path.join(FIXTURES, `${f}.txt`), "utf8").repeat(REPEAT),
      );
    const calls = Array.from({ length: ROUNDS }, () => files.map((f) => step("outline", { path: f }))).flat();
    scene.server = await startScriptedServer([...calls, step("final", "mapped")]);
    const cli = spawnCli(["-e", "map the files"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_AGENT_MAX_TURNS: String(calls.length + 5) },
    });
    const r = await collect(cli, { timeoutMs: 120_000 });
    expect(r.stderr).not.toContain("Fatal process out of memory");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("mapped");
    // Every code file was parsed by its grammar, none fell back to the heuristic.
    const observations = scene.server
      .completions()
      .slice(1)
      .map((q) => {
        const messages = (q.body as { messages: { content: string }[] }).messages;
        return messages.at(-1)?.content ?? "";
      });
    expect(observations).toHaveLength(calls.length);
    const fellBack = observations.filter((o) => o.includes("keyword heuristic, because"));
    expect(fellBack).toEqual([]);
    expect(observations.filter((o) => o.includes(", tree-sitter")).length).toBeGreaterThan(calls.length / 2);
    // The run's grammar process (its argument is the pid of the Scoot it works for) leaves with it:
    // its channel closed when Scoot exited. A bound, not a measure: it goes within milliseconds.
    const left = () => processesWith(`${GRAMMAR_SCRIPT} ${cli.pid}`);
    for (const until = Date.now() + LEAVE_GUARD_MS; left().length > 0 && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 50));
    expect(left()).toEqual([]);
  });

  it("runs apart from Scoot, started with --liftoff-only, without Scoot's environment, and is reused", async () => {
    process.env.SCOOT_GRAMMAR_TEST_TOKEN = "tok-grammar-process-123456";
    const first = await outlineSource("a.py", "def f():\n    pass\n", {
      deadlineAt: Date.now() + 30_000,
    }).finally(() => delete process.env.SCOOT_GRAMMAR_TEST_TOKEN);
    expect(first).toContain("(Python, tree-sitter)");
    const pid = grammarProcessPid();
    expect(pid).toBeDefined();
    expect(pid).not.toBe(process.pid);
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    expect(argv).toContain("--liftoff-only");
    expect(argv).toContain(String(process.pid));
    const environ = fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
    expect(environ.map((e) => e.split("=")[0])).toEqual(expect.arrayContaining(["PATH"]));
    expect(environ.join("\n")).not.toContain("tok-grammar-process");
    await outlineSource("b.go", "package b\nfunc G() {}\n", { deadlineAt: Date.now() + 30_000 });
    expect(grammarProcessPid()).toBe(pid);
  });

  it("one that dies costs the outline it was doing, said plainly, and the next outline starts another", async () => {
    await outlineSource("a.py", "def f():\n    pass\n", { deadlineAt: Date.now() + 30_000 });
    const dying = grammarProcessPid() as number;
    // Stopped (and seen stopped) before it is asked, so it cannot answer before the kill lands: on a
    // busy machine this process may be descheduled between the request and the kill.
    process.kill(dying, "SIGSTOP");
    const stopped = () => /^\d+ \(.*\) [Tt]/.test(fs.readFileSync(`/proc/${dying}/stat`, "utf8"));
    for (const until = Date.now() + LEAVE_GUARD_MS; !stopped() && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 10));
    expect(stopped()).toBe(true);
    const pending = outlineSource("c.py", "def g():\n    pass\n", { deadlineAt: Date.now() + 30_000 });
    process.kill(dying, "SIGKILL");
    const lost = await pending;
    expect(lost.split("\n")[0]).toBe(
      "outline of c.py (keyword heuristic, because the Python grammar failed to load: the grammar process ended (SIGKILL)): 1 entry",
    );
    const next = await outlineSource("d.py", "def h():\n    pass\n", { deadlineAt: Date.now() + 30_000 });
    expect(next).toContain("(Python, tree-sitter)");
    expect(grammarProcessPid()).not.toBe(dying);
  });

  it("an idle one is let go (a daemon keeps no grammars for good); the next outline starts another", async () => {
    const idle = 300;
    setGrammarIdleMs(idle);
    await outlineSource("a.py", "def f():\n    pass\n", { deadlineAt: Date.now() + 30_000 });
    const first = grammarProcessPid() as number;
    // Outlines closer together than the idle time keep the same process.
    await new Promise((r) => setTimeout(r, idle / 3));
    await outlineSource("b.py", "def g():\n    pass\n", { deadlineAt: Date.now() + 30_000 });
    expect(grammarProcessPid()).toBe(first);
    const alive = () =>
      fs.existsSync(`/proc/${first}`) && !/^\d+ \S+ Z/.test(fs.readFileSync(`/proc/${first}/stat`, "utf8"));
    for (const until = Date.now() + LEAVE_GUARD_MS; alive() && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 50));
    expect(alive()).toBe(false);
    expect(grammarProcessPid()).toBeUndefined();
    const next = await outlineSource("c.py", "def h():\n    pass\n", { deadlineAt: Date.now() + 30_000 });
    expect(next).toContain("(Python, tree-sitter)");
    expect(grammarProcessPid()).not.toBe(first);
  });

  it("the end of a process let go never fails an outline the next process is doing", async () => {
    await outlineSource("a.py", "def f():\n    pass\n", { deadlineAt: Date.now() + 30_000 });
    const gone = grammarProcessPid();
    // Let go at once (as the idle timer and the deadline do): its exit arrives while the next
    // outline waits on a new process, which takes far longer to start and answer.
    stopGrammarProcess();
    const next = await outlineSource("b.py", "def g():\n    pass\n", { deadlineAt: Date.now() + 30_000 });
    expect(next).toContain("(Python, tree-sitter)");
    expect(grammarProcessPid()).not.toBe(gone);
  });
});
