/**
 * End-to-end runs of the built CLI against the scripted OpenAI-compatible server: what needs
 * the real binary (argv, stdout, exit codes, the home on disk, signals). The loop's own
 * decisions — corrections, limits, compaction, denials, parallel — run in process in
 * test/agent/loop-runs.test.ts.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { auditEvents } from "../helpers/audit-file.js";
import { collect, runCli, spawnCli } from "../helpers/cli.js";
import { processesWith, uniqueSleepArg, waitForProcess } from "../helpers/procs.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-home-", project: "demo" });

async function scoot(script: ScriptItem[], args: string[], env: Record<string, string> = {}) {
  scene.server = await startScriptedServer(script);
  return runCli(args, {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url, ...env },
  });
}

/** Transcripts only: `<id>.meta.json` sidecars sit beside them (docs/sessions.md "Resuming a session"). */
function sessionFiles(): string[] {
  return fs.readdirSync(path.join(scene.home, "state", "sessions")).filter((f) => /\.jsonl(\.\d+)?$/.test(f));
}
function transcript(id: string): { role: string; content: string }[] {
  return fs
    .readFileSync(path.join(scene.home, "state", "sessions", `${id}.jsonl`), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}
const multiToolScript = (): ScriptItem[] => [
  step("glob", { pattern: "src/**/*.ts" }),
  step("grep", { pattern: "TODO", path: "src/b.ts" }),
  step("file_read", { path: "README.md" }),
  step("final", "There are 2 TypeScript files; b.ts has a TODO."),
];

describe.each(["chat", "responses"])("a multi-tool run on the %s API", (api) => {
  it("prints only the final answer and records every step", async () => {
    const r = await scoot(multiToolScript(), ["-e", "count the ts files"], { SCOOT_BACKEND_API: api });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("There are 2 TypeScript files; b.ts has a TODO.\n");
    const paths = scene.server!.completions().map((q) => q.path);
    expect(paths).toEqual(Array(4).fill(api === "chat" ? "/v1/chat/completions" : "/v1/responses"));
    // The observation of glob reached the model in the next request.
    const second = JSON.stringify(scene.server!.completions()[1]!.body);
    expect(second).toContain("src/a.ts");
    expect(second).toContain("UNTRUSTED_OBSERVATION");

    const [file] = sessionFiles();
    const id = file!.replace(/\.jsonl$/, "");
    expect(id).toMatch(/^cli-\d+-\d+$/);
    const t = transcript(id);
    expect(t.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(t[1]!.content).toBe("count the ts files");
    expect(t[3]!.content).toContain("src/b.ts");

    const events = auditEvents(scene.home);
    expect(events.map((e) => e.kind)).toEqual([
      "run",
      ...Array(3).fill(["thought", "tool_call", "observation"]).flat(),
      "thought",
      "final",
    ]);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    for (const e of events) {
      expect(e.session_id).toBe(id);
      expect(typeof e.run_id).toBe("string");
      // A call's records carry it as fields (`call`), after `msg` and covered by the chain.
      const withCall = e.kind === "tool_call" || e.kind === "observation";
      expect(Object.keys(e)).toEqual([
        "seq",
        "ts",
        "session_id",
        "run_id",
        "kind",
        "msg",
        ...(withCall ? ["call"] : []),
        "prev",
      ]);
    }
    expect(events[0]!.msg).toBe("goal: count the ts files");
    expect(events[2]!.msg).toContain("glob");

    // The inspection commands read it back.
    const list = await runCli(["sessions", "list", "--all", "--json"], { home: scene.home });
    expect(JSON.parse(list.stdout)[0]).toMatchObject({
      id,
      messages: 9,
      first_user_message: "count the ts files",
    });
    const show = await runCli(["session", "show", id], { home: scene.home });
    expect(show.stdout.trim().split("\n")).toHaveLength(9);
    const audit = await runCli(["audit", "show", id], { home: scene.home });
    expect(
      audit.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).kind),
    ).toEqual(events.map((e) => e.kind));
  });
});

describe("-e output and options", () => {
  it("--json prints {session_id, answer, turns, usage, status, stop}", async () => {
    const r = await scoot([step("final", "done")], ["-e", "hi", "--json", "--session-id", "my-job.1"]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({
      session_id: "my-job.1",
      answer: "done",
      turns: 1,
      status: "final",
      stop: "final",
    });
    expect(j.usage.total_tokens).toBeGreaterThan(0);
    expect(sessionFiles()).toEqual(["my-job.1.jsonl"]);
  });
  it("--json says why a run stopped: stop max_turns beside status failed, exit 1", async () => {
    const r = await scoot([step("glob", JSON.stringify({ pattern: "*" }))], ["-e", "hi", "--json"], {
      SCOOT_AGENT_MAX_TURNS: "1",
    });
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ answer: null, turns: 1, status: "failed", stop: "max_turns" });
    expect(j.error).toContain("agent.max_turns");
  });
  it("--trace prints progress markers before blocking steps and a summary", async () => {
    const r = await scoot([step("bash", "echo traced"), step("final", "ok")], ["-e", "go", "--trace"]);
    expect(r.code).toBe(0);
    const lines = r.stderr.split("\n");
    const thinking = lines.findIndex((l) => l.includes("turn 1: thinking"));
    const running = lines.findIndex((l) => l.includes("running: bash"));
    const observed = lines.findIndex((l) => l.includes("observation:"));
    expect(thinking).toBeGreaterThanOrEqual(0);
    expect(running).toBeGreaterThan(thinking);
    expect(observed).toBeGreaterThan(running);
    expect(r.stderr).toMatch(
      /done: status=final turns=2 tool_calls=1 denials=0 refusals=0 errors=0 tokens=\d+/,
    );
    expect(r.stdout).toBe("ok\n");
  });
  it("an empty goal is a usage error", async () => {
    const r = await runCli(["-e", "  "], { home: scene.home });
    expect(r.code).toBe(2);
  });
});

describe("limits and failures", () => {
  it("a transient 500 is retried and the run succeeds", async () => {
    const r = await scoot(
      [{ status: 500 }, { status: 429, retryAfter: 0 }, step("final", "ok")],
      ["-e", "go"],
    );
    expect(r.code, r.stderr).toBe(0);
    expect(scene.server!.completions()).toHaveLength(3);
  });
  it("auto structured output falls back when the backend rejects json_schema", async () => {
    // Plain JSON: with streaming on, a 400 is first retried without `stream` (test/e2e/streaming.test.ts).
    const r = await scoot(
      [{ rejectFormat: "json_schema" }, step("glob", { pattern: "*" }), step("final", "ok")],
      ["-e", "go"],
      { SCOOT_BACKEND_STREAM: "false" },
    );
    expect(r.code, r.stderr).toBe(0);
    const formats = scene
      .server!.completions()
      .map((q) => (q.body as { response_format?: { type: string } }).response_format?.type);
    expect(formats).toEqual(["json_schema", "json_object", "json_object"]);
  });
  it("a backend that is down gives one clear line and exit 1", async () => {
    const r = await runCli(["-e", "go", "--retries", "0"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: "http://127.0.0.1:9/v1" },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("http://127.0.0.1:9/v1/chat/completions");
    expect(r.stderr).toMatch(/scoot doctor|SCOOT_BACKEND_BASE_URL/);
  });
  it("a non-transient 401 fails at once with the redacted server message", async () => {
    const r = await scoot(
      [{ status: 401, body: { error: { message: "bad key sk-abcdefghijklmnop0000" } } }],
      ["-e", "go"],
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("401");
    expect(r.stderr).not.toContain("sk-abcdefghijklmnop0000");
    expect(scene.server!.completions()).toHaveLength(1);
  });
});

describe("policy in runs", () => {
  it("--unattended --policy unrestricted still denies bash under the default ceiling", async () => {
    const marker = path.join(scene.project, "pwned");
    const r = await scoot(
      [step("bash", `touch ${marker}`), step("final", "ok")],
      ["-e", "go", "--unattended", "--policy", "unrestricted"],
    );
    expect(r.code).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
    const deny = auditEvents(scene.home).find((e) => e.kind === "policy_deny");
    expect(deny?.msg).toMatch(/readonly/);
    expect(JSON.stringify(scene.server!.completions()[1]!.body)).toContain("denied by policy (readonly)");
  });
});

describe("secrets", () => {
  it("a token never reaches the transcript, the audit log or the child environment", async () => {
    const token = "tok-e2e-very-secret-4242";
    const r = await scoot(
      [step("bash", "env | grep -c SECRET_MARK_ || true"), step("final", `the key is ${token}`)],
      ["-e", `remember ${token}`],
      { OPENAI_API_KEY: token, SECRET_MARK_X: "1" },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain(token);
    const all = [
      ...fs
        .readdirSync(path.join(scene.home, "state", "sessions"))
        .map((f) => path.join(scene.home, "state", "sessions", f)),
      path.join(scene.home, "logs", "audit.jsonl"),
    ]
      .map((f) => fs.readFileSync(f, "utf8"))
      .join("\n");
    expect(all).not.toContain(token);
    expect(all).toContain("[REDACTED]");
    // The bearer header was sent to the backend (it is the backend's token).
    expect(scene.server!.completions()[0]!.headers.authorization).toBe(`Bearer ${token}`);
    // The child saw no OPENAI_API_KEY.
    const probe = await scoot(
      [step("bash", "echo KEY=$" + "{OPENAI_API_KEY:-absent}"), step("final", "ok")],
      ["-e", "x"],
      {
        OPENAI_API_KEY: token,
      },
    );
    expect(probe.code).toBe(0);
    expect(JSON.stringify(scene.server!.completions()[1]!.body)).toContain("KEY=absent");
  });
});

describe("fail closed on audit", () => {
  it("when the audit log cannot be written, no tool runs and the run fails", async () => {
    fs.mkdirSync(path.join(scene.home, "logs", "audit.jsonl"), { recursive: true });
    const marker = path.join(scene.project, "ran");
    const r = await scoot([step("bash", `touch ${marker}`), step("final", "x")], ["-e", "go"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot write the audit log/);
    expect(r.stderr).toMatch(/no tool runs without an audit record/);
    expect(fs.existsSync(marker)).toBe(false);
  });
});

describe("interruption", () => {
  it("SIGINT during a long bash kills its process group, audits it and exits 130", async () => {
    // Found by a tag in its command line: sandboxed or not, the host sees its real pid.
    const sleepArg = uniqueSleepArg(300);
    scene.server = await startScriptedServer([step("bash", `sleep ${sleepArg} & wait`)]);
    const child = spawnCli(["-e", "go"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    const done = collect(child, { timeoutMs: 30_000 });
    expect(await waitForProcess(`sleep ${sleepArg}`, 10_000)).toBe(true);
    child.kill("SIGINT");
    const r = await done;
    expect(r.code).toBe(130);
    const left = processesWith(`sleep ${sleepArg}`);
    for (const pid of left) process.kill(pid, "SIGKILL");
    expect(left).toEqual([]);
    expect(auditEvents(scene.home).at(-1)).toMatchObject({ kind: "system_error", msg: "interrupted" });
  });
});
