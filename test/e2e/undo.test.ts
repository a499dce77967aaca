/**
 * `scoot undo`, `scoot diff` and approval where nobody can answer, through the CLI against the
 * scripted server (docs/sessions.md "Undo", "Approval"). Commands run in this process
 * (`runInProcess`) but for the first flow, stdin, `serve` and the daemon, on the built CLI.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { removeDir, runCli, runInProcess, tempDir } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-undo-home-", project: "scoot-undo-project-" });

const final = (answer: string): ScriptItem => ({
  reply: { thought: "t", action: "final", action_input: answer },
});
const file = (name: string) => path.join(scene.project, name);

async function evalRun(
  items: ScriptItem[],
  extra: string[] = [],
  env: Record<string, string> = {},
  binary = false,
) {
  scene.server = await startScriptedServer(items);
  const r = await (binary ? runCli : runInProcess)(
    ["-e", "change things", "--session-id", "undo-me", ...extra],
    {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, ...env },
    },
  );
  await scene.server.close();
  scene.server = undefined;
  return r;
}

/** In this process, or `binary`: the built CLI in a process of its own. */
const scoot = (args: string[], binary = false) =>
  (binary ? runCli : runInProcess)(args, { home: scene.home, cwd: scene.project });

describe("scoot undo", () => {
  it("reverts the last run: an edited file comes back, a created file is removed; bash is not covered", async () => {
    fs.writeFileSync(file("calc.py"), "x = 1\n");
    const r = await evalRun(
      [
        step("file_edit", { path: "calc.py", old: "x = 1", new: "x = 2" }),
        step("file_write", { path: "sub/new.txt", content: "hello\n" }),
        final("done"),
      ],
      [],
      {},
      true,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(file("calc.py"), "utf8")).toBe("x = 2\n");

    const diff = await scoot(["diff"], true);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain("--- a/calc.py\n+++ b/calc.py");
    expect(diff.stdout).toContain("-x = 1\n+x = 2");
    expect(diff.stdout).toContain("--- /dev/null\n+++ b/sub/new.txt");
    // Piped: no escape sequences.
    expect(diff.stdout).not.toContain("\u001b[");

    const undo = await scoot(["undo"], true);
    expect(undo.code, undo.stderr).toBe(0);
    expect(undo.stdout).toContain("undid run");
    expect(undo.stdout).toContain("of session undo-me (goal: change things)");
    expect(undo.stdout).toContain("restored calc.py");
    expect(undo.stdout).toContain("removed  sub/new.txt (it did not exist before)");
    expect(undo.stderr).toContain("changes made by bash commands are not reverted");
    expect(fs.readFileSync(file("calc.py"), "utf8")).toBe("x = 1\n");
    expect(fs.existsSync(file("sub/new.txt"))).toBe(false);

    // Nothing left: said clearly, exit 1.
    const again = await scoot(["undo", "undo-me"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("session undo-me has no file changes to undo");
    expect(again.stderr).toContain("bash");
  });

  it("diff names files relative to the session's project root from any directory", async () => {
    fs.mkdirSync(file("src"));
    fs.writeFileSync(file("src/x.py"), "x = 1\n");
    const r = await evalRun([
      step("file_edit", { path: "src/x.py", old: "x = 1", new: "x = 2" }),
      final("done"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const elsewhere = tempDir("scoot-undo-elsewhere-");
    try {
      for (const cwd of [scene.project, file("src"), elsewhere]) {
        const diff = await runCli(["diff", "undo-me"], { home: scene.home, cwd });
        expect(diff.code, diff.stderr).toBe(0);
        expect(diff.stdout, cwd).toContain("--- a/src/x.py\n+++ b/src/x.py\n");
        expect(diff.stdout).not.toContain("//");
      }
    } finally {
      removeDir(elsewhere);
    }
  });

  it("refuses a file changed since, naming it and changing nothing; --force reverts it", async () => {
    fs.writeFileSync(file("a.txt"), "original\n");
    fs.writeFileSync(file("b.txt"), "b original\n");
    await evalRun([
      step("file_write", { path: "a.txt", content: "scoot\n" }),
      step("file_write", { path: "b.txt", content: "b scoot\n" }),
      final("done"),
    ]);
    fs.writeFileSync(file("a.txt"), "my own work\n");
    const refused = await scoot(["undo", "undo-me"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("nothing was undone");
    expect(refused.stderr).toContain("  a.txt\n");
    expect(refused.stderr).not.toContain("  b.txt\n");
    // The fix names the commands undo and diff take (never a flag they lack, like --resume).
    expect(refused.stderr).toContain(
      "  fix: look at the changes (scoot diff undo-me), then scoot undo undo-me --force to overwrite them\n",
    );
    expect(refused.stderr).not.toContain("--resume");
    expect(fs.readFileSync(file("a.txt"), "utf8")).toBe("my own work\n");
    expect(fs.readFileSync(file("b.txt"), "utf8")).toBe("b scoot\n");

    const forced = await scoot(["undo", "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(fs.readFileSync(file("a.txt"), "utf8")).toBe("original\n");
    expect(fs.readFileSync(file("b.txt"), "utf8")).toBe("b original\n");
  });

  it("a session without file changes says so for undo and diff; unknown sessions are usage errors", async () => {
    await evalRun([step("bash", "echo hi > by-bash.txt"), final("done")]);
    const undo = await scoot(["undo"]);
    expect(undo.code).toBe(1);
    expect(undo.stderr).toContain("has no file changes to undo");
    expect(undo.stderr).toContain("changes made by bash commands are not reverted");
    const diff = await scoot(["diff"]);
    expect(diff.code).toBe(0);
    expect(diff.stderr).toContain("has no file changes");
    expect((await scoot(["undo", "no-such-session"])).code).toBe(2);
    expect((await scoot(["undo", "../escape"])).code).toBe(2);
    expect((await scoot(["diff", "a", "b"])).code).toBe(2);
    for (const command of ["undo", "diff"]) {
      const elsewhere = await runCli([command], { home: scene.home, cwd: scene.home });
      expect(elsewhere.code).toBe(2);
      expect(elsewhere.stderr).toContain(
        `scoot ${command}: no session in ${fs.realpathSync(scene.home)}: none was started in this directory (see scoot sessions list --all, or name one: scoot ${command} <session-id>)`,
      );
      expect(elsewhere.stderr).not.toContain("--resume");
    }
  });
});

describe('the model is told of an undo (docs/sessions.md "What the model is told")', () => {
  /** The last message of completion request `n`, as the server got it. */
  const lastSent = (n: number) =>
    (scene.server!.completions()[n]!.body as { messages: { role: string; content: string }[] }).messages.at(
      -1,
    )!;

  it("the REPL over a pipe: /undo, then the next goal's request names the restored file", async () => {
    fs.writeFileSync(file("calc.py"), "x = 1\n");
    scene.server = await startScriptedServer([
      step("file_edit", { path: "calc.py", old: "x = 1", new: "x = 2" }),
      final("edited"),
      final("it is 1 again"),
    ]);
    const r = await runCli(["repl"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
      input: "change calc\n/undo\nwhat is x now?\n",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("restored calc.py");
    expect(fs.readFileSync(file("calc.py"), "utf8")).toBe("x = 1\n");
    const sent = lastSent(2);
    expect(sent.role).toBe("user");
    expect(sent.content).toMatch(
      /^\[scoot: the user ran \/undo: the file changes of the goal "change calc" were reverted\. Restored to what they held before that goal: "calc\.py"\./,
    );
    expect(sent.content.endsWith("\n\nwhat is x now?")).toBe(true);
  });

  it("scoot undo writes the note into the session, so --resume tells the model", async () => {
    fs.writeFileSync(file("calc.py"), "x = 1\n");
    const r = await evalRun([step("file_write", { path: "calc.py", content: "x = 3\n" }), final("done")]);
    expect(r.code, r.stderr).toBe(0);
    expect((await scoot(["undo", "undo-me"])).code).toBe(0);
    scene.server = await startScriptedServer([final("resumed")]);
    const resumed = await runCli(["-e", "and now?", "--resume", "undo-me"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    const sent = lastSent(0);
    expect(sent.content).toContain('Restored to what they held before that goal: "calc.py".');
    expect(sent.content.endsWith("\n\nand now?")).toBe(true);
  });
});

describe("approval where nobody can answer", () => {
  it("-e with tools.approval = ask and no terminal finishes without waiting", async () => {
    const r = await evalRun(
      [step("file_write", { path: "out.txt", content: "written\n" }), final("done")],
      [],
      { SCOOT_TOOLS_APPROVAL: "ask" },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(file("out.txt"), "utf8")).toBe("written\n");
    const audit = fs.readFileSync(path.join(scene.home, "logs", "audit.jsonl"), "utf8");
    expect(audit).not.toContain('"kind":"approval"');
  });

  it("a scheduled job with tools.approval = ask never waits", async () => {
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      [
        "[tools]",
        'approval = "ask"',
        "[edge]",
        'max_job_policy = "unrestricted"',
        "[schedule]",
        "enabled = true",
        "[[schedule.jobs]]",
        'id = "writer"',
        'goal = "write the report"',
        "every_sec = 3600",
        'mode = "unrestricted"',
        "",
      ].join("\n"),
    );
    scene.server = await startScriptedServer([
      step("file_write", { path: "report.txt", content: "ok\n" }),
      final("done"),
    ]);
    const r = await runCli(["schedule", "run", "--ticks", "1"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(file("report.txt"), "utf8")).toBe("ok\n");
    expect(fs.readFileSync(path.join(scene.home, "logs", "audit.jsonl"), "utf8")).not.toContain(
      '"kind":"approval"',
    );
  });

  it("serve with tools.approval = ask never waits", async () => {
    scene.server = await startScriptedServer([
      step("file_write", { path: "served.txt", content: "s\n" }),
      final("done"),
    ]);
    const r = await runCli(["serve"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_TOOLS_APPROVAL: "ask" },
      input: `${JSON.stringify({ id: 1, method: "run", params: { goal: "write" } })}\n`,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ id: 1, ok: true, result: { reply: "done" } });
    expect(fs.readFileSync(file("served.txt"), "utf8")).toBe("s\n");
  });

  it("--approval ask with -e warns that nothing will wait; the REPL without a terminal never waits either", async () => {
    const r = await evalRun([step("bash", "true"), final("done")], ["--approval", "ask"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("--approval ask has no effect here");
    scene.server = await startScriptedServer([
      step("file_write", { path: "r.txt", content: "r\n" }),
      final("ok"),
    ]);
    const repl = await runCli(["repl", "--approval", "ask"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
      input: "write it\n",
    });
    expect(repl.code, repl.stderr).toBe(0);
    expect(repl.stdout).toBe("ok\n");
    expect(fs.readFileSync(file("r.txt"), "utf8")).toBe("r\n");
  });

  it("a bad --approval value is a usage error, for every command that runs goals", async () => {
    for (const args of [["-e", "x"], ["repl"], ["serve"]]) {
      const r = await (args[0] === "-e" ? runCli : runInProcess)([...args, "--approval", "sometimes"], {
        home: scene.home,
        cwd: scene.project,
      });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain('--approval must be ask or never, got "sometimes"');
    }
  });

  it("a bad tools.approval in the file names the key (exit 2); in the environment it is ignored with a warning", async () => {
    fs.writeFileSync(path.join(scene.home, "config.toml"), '[tools]\napproval = "maybe"\n');
    const r = await runInProcess(["-e", "x"], { home: scene.home, cwd: scene.project });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("tools.approval");
    fs.rmSync(path.join(scene.home, "config.toml"));
    scene.server = await startScriptedServer([final("fine")]);
    const env = await runInProcess(["-e", "x"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_TOOLS_APPROVAL: "maybe" },
    });
    expect(env.code, env.stderr).toBe(0);
    expect(env.stderr).toContain("SCOOT_TOOLS_APPROVAL");
  });
});
