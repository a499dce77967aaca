/**
 * Shell containment through the real loop: the built CLI, the scripted server,
 * guarded mode, bash under bubblewrap. Each case is an attack a model could try with one
 * `bash` step; the sandbox must stop it while ordinary project work keeps working.
 *
 * Scoot's home, the fake user home and the secret file live under /var/tmp on purpose:
 * the sandbox's private /tmp would hide anything under /tmp anyway, so putting them there
 * would not test the hiding rules themselves.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { collect, removeDir, runCli, spawnCli, tempDir } from "../helpers/cli.js";
import { bwrapWorks, processesWith, uniqueSleepArg, waitForProcess } from "../helpers/procs.js";
import { type ScriptedServer, startScriptedServer, step } from "../helpers/scripted-server.js";

const OUTSIDE_ROOT = "/var/tmp";

const BWRAP = bwrapWorks();
if (!BWRAP) console.log("sandbox e2e: skipped, bwrap cannot run here (apt-get install bubblewrap)");

let outside: string;
let home: string;
let userHome: string;
let project: string;
let server: ScriptedServer | undefined;

const TOKEN_MARK = "tokenfile body alpha bravo 4711";
const SSH_MARK = "fake ssh key charlie delta 4712";
const SECRET_MARK = "configured secret echo foxtrot 4713";

beforeEach(() => {
  outside = fs.mkdtempSync(path.join(OUTSIDE_ROOT, "scoot-sbx-"));
  home = path.join(outside, "scoot-home");
  userHome = path.join(outside, "user-home");
  fs.mkdirSync(home, { mode: 0o700 });
  fs.mkdirSync(path.join(userHome, ".ssh"), { recursive: true });
  fs.writeFileSync(path.join(home, "token"), `${TOKEN_MARK}\n`, { mode: 0o600 });
  fs.writeFileSync(path.join(userHome, ".ssh", "id_rsa"), `${SSH_MARK}\n`, { mode: 0o600 });
  fs.writeFileSync(path.join(outside, "plain-notes.txt"), `${SECRET_MARK}\n`);
  project = tempDir("scoot-sbx-proj-");
  execFileSync("git", ["init", "-q"], { cwd: project });
  fs.writeFileSync(path.join(project, "README.md"), "# demo\n");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(outside);
  removeDir(project);
});

async function scoot(commands: string[], env: Record<string, string> = {}, args: string[] = []) {
  server = await startScriptedServer([...commands.map((c) => step("bash", c)), step("final", "done")]);
  return runCli(["-e", "go", ...args], {
    home,
    cwd: project,
    env: {
      SCOOT_BACKEND_BASE_URL: server.url,
      SCOOT_TOOLS_SECRET_PATHS: path.join(outside, "plain-notes.txt"),
      HOME: userHome,
      ...env,
    },
  });
}

/** What the model saw after the n-th (0-based) bash step: the body of the next request. */
function seen(n: number): string {
  return JSON.stringify(server!.completions()[n + 1]!.body);
}

function transcriptText(): string {
  const dir = path.join(home, "state", "sessions");
  return fs
    .readdirSync(dir)
    .map((f) => fs.readFileSync(path.join(dir, f), "utf8"))
    .join("\n");
}

describe.skipIf(!BWRAP)("guarded bash under the sandbox (real loop)", () => {
  it("cannot read the token file, a ~/.ssh key or a tools.secret_paths file", async () => {
    const r = await scoot([
      `cat ${path.join(home, "token")}`,
      "cat ~/.ssh/id_rsa",
      `cat ${path.join(outside, "plain-notes.txt")}`,
    ]);
    expect(r.code, r.stderr).toBe(0);
    for (const [i, mark] of [TOKEN_MARK, SSH_MARK, SECRET_MARK].entries()) {
      expect(seen(i)).not.toContain(mark);
      expect(seen(i)).toMatch(/exit code: [1-9]|\(no output\)/);
    }
    const t = transcriptText();
    for (const mark of [TOKEN_MARK, SSH_MARK, SECRET_MARK]) expect(t).not.toContain(mark);
  });

  it("cannot write outside the project; nothing appears there", async () => {
    const target = path.join(outside, "escaped.txt");
    const r = await scoot([`echo x > ${target}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(target)).toBe(false);
    expect(seen(0)).toMatch(/exit code: [1-9]/);
    expect(seen(0)).toMatch(/Read-only file system/);
  });

  it("cannot connect to a listener on 127.0.0.1", async () => {
    let connections = 0;
    const listener = net.createServer((s) => {
      connections += 1;
      s.end("hello from the host\n");
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const port = (listener.address() as net.AddressInfo).port;
    try {
      const js = `require('net').connect(${port},'127.0.0.1').on('data',d=>{process.stdout.write('GOT '+d);process.exit(0)}).on('error',e=>{console.log('ERR '+e.code);process.exit(3)})`;
      const r = await scoot([`${process.execPath} -e "${js}"`]);
      expect(r.code, r.stderr).toBe(0);
      expect(seen(0)).not.toContain("hello from the host");
      expect(seen(0)).toContain("ERR ");
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });

  it("a background child that left the process group is gone after the call", async () => {
    const tag = `${process.pid}${Date.now() % 100000}`;
    const r = await scoot([`setsid sleep 300.${tag} > /dev/null 2>&1 & echo started`]);
    expect(r.code, r.stderr).toBe(0);
    expect(seen(0)).toContain("started");
    const left = processesWith(`sleep 300.${tag}`);
    for (const pid of left) process.kill(pid, "SIGKILL");
    expect(left).toEqual([]);
  });

  it("the deadline still kills a sandboxed sleep and its whole tree", async () => {
    const tag = `${process.pid}${(Date.now() % 100000) + 1}`;
    const started = Date.now();
    const r = await scoot([`sleep 301.${tag} & sleep 302.${tag}`], { SCOOT_TOOLS_TIMEOUT_MS: "1500" });
    expect(r.code, r.stderr).toBe(0);
    // Relative to the sleeps the deadline cuts short (300 s): far below them, a margin over the 1.5 s deadline.
    expect(Date.now() - started).toBeLessThan(301_000 / 15);
    expect(seen(0)).toContain("timed out after 1500 ms");
    const left = [...processesWith(`sleep 301.${tag}`), ...processesWith(`sleep 302.${tag}`)];
    for (const pid of left) process.kill(pid, "SIGKILL");
    expect(left).toEqual([]);
  });

  it("a SIGKILLed Scoot takes its sandboxed command with it (--die-with-parent)", async () => {
    const sleepArg = uniqueSleepArg(300);
    server = await startScriptedServer([step("bash", `sleep ${sleepArg} & setsid sleep ${sleepArg} & wait`)]);
    const child = spawnCli(["-e", "go"], {
      home,
      cwd: project,
      env: { SCOOT_BACKEND_BASE_URL: server.url, HOME: userHome },
    });
    const done = collect(child, { timeoutMs: 30_000 });
    expect(await waitForProcess(`sleep ${sleepArg}`, 10_000)).toBe(true);
    child.kill("SIGKILL");
    await done;
    // The kernel ends the namespace right after its parent dies; give it a moment.
    for (let i = 0; i < 40 && processesWith(`sleep ${sleepArg}`).length > 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    const left = processesWith(`sleep ${sleepArg}`);
    for (const pid of left) process.kill(pid, "SIGKILL");
    expect(left).toEqual([]);
  });

  it("ordinary work keeps working: project writes, sed -i, git status, npm --version, /tmp", async () => {
    const r = await scoot([
      "echo hello > out.txt && sed -i s/hello/bye/ out.txt && cat out.txt",
      "git status --short",
      "npm --version",
      "echo scratch > /tmp/x && cat /tmp/x",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(path.join(project, "out.txt"), "utf8")).toBe("bye\n");
    expect(seen(0)).toContain("exit code: 0");
    expect(seen(1)).toContain("out.txt");
    expect(seen(2)).toMatch(/exit code: 0.*\d+\.\d+\.\d+/);
    expect(seen(3)).toContain("scratch");
  });
});

describe("bwrap unavailable (tools.sandbox_bwrap_path names nothing), through the real CLI", () => {
  const NO_BWRAP = { SCOOT_TOOLS_SANDBOX_BWRAP_PATH: "/nonexistent-scoot-bin/bwrap" };
  it('tools.sandbox = "bwrap": the call is denied with a clear observation and nothing runs', async () => {
    const marker = path.join(project, "ran");
    const r = await scoot([`echo x > ${marker}`], { ...NO_BWRAP, SCOOT_TOOLS_SANDBOX: "bwrap" });
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
    expect(seen(0)).toContain('bash: denied: tools.sandbox = \\"bwrap\\" but the sandbox cannot start');
    expect(seen(0)).toContain("/nonexistent-scoot-bin/bwrap is not an executable file");
    expect(seen(0)).toContain("apt-get install bubblewrap");
    const doctor = await runCli(["doctor"], { home, env: { ...NO_BWRAP, SCOOT_TOOLS_SANDBOX: "bwrap" } });
    expect(doctor.stdout).toMatch(
      /FAIL\s+sandbox\s+tools.sandbox = "bwrap" but .*every bash call will be denied/,
    );
  });
  it('"auto": the command runs, --trace says so once, doctor WARNs with the fix', async () => {
    const marker = path.join(project, "ran");
    const r = await scoot([`echo x > ${marker}`, "true"], NO_BWRAP, ["--trace"]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(marker)).toBe(true);
    const lines = r.stderr.split("\n").filter((l) => l.startsWith("[trace] sandbox:"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /sandbox unavailable, bash runs with the tripwire only .*apt-get install bubblewrap/,
    );
    const doctor = await runCli(["doctor"], { home, env: NO_BWRAP });
    expect(doctor.stdout).toMatch(
      /WARN\s+sandbox\s+tools.sandbox_bwrap_path = \/nonexistent-scoot-bin\/bwrap is not an executable file: .*Fix: install bubblewrap/,
    );
  });
  it.skipIf(!BWRAP)("doctor reports the working sandbox", async () => {
    const doctor = await runCli(["doctor"], { home });
    expect(doctor.stdout).toMatch(
      /OK\s+sandbox\s+bwrap \d+\.\d+(\.\d+)? at \/\S+ \(network off, seccomp on\)/,
    );
  });
});

describe.skipIf(!BWRAP)("unattended work that may run bash is sandboxed too", () => {
  const UNRESTRICTED_CEILING = { SCOOT_EDGE_MAX_JOB_POLICY: "unrestricted" };
  it("-e --unattended --policy unrestricted: sandboxed; the same at the keyboard is not", async () => {
    const target = path.join(outside, "unattended.txt");
    const r = await scoot([`echo x > ${target}`], UNRESTRICTED_CEILING, [
      "--unattended",
      "--policy",
      "unrestricted",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(target)).toBe(false);
    expect(seen(0)).toMatch(/Read-only file system/);
    await server?.close();
    const r2 = await scoot([`echo x > ${target}`], UNRESTRICTED_CEILING, ["--policy", "unrestricted"]);
    expect(r2.code, r2.stderr).toBe(0);
    expect(fs.existsSync(target)).toBe(true);
  });
  it("a scheduled job in unrestricted mode runs its bash sandboxed", async () => {
    const target = path.join(outside, "job.txt");
    fs.writeFileSync(
      path.join(home, "config.toml"),
      [
        "[edge]",
        'max_job_policy = "unrestricted"',
        "[schedule]",
        "enabled = true",
        "[[schedule.jobs]]",
        'id = "sbx"',
        'goal = "write"',
        "every_sec = 3600",
        'mode = "unrestricted"',
      ].join("\n"),
    );
    server = await startScriptedServer([step("bash", `echo x > ${target}`), step("final", "done")]);
    const r = await runCli(["schedule", "run", "--ticks", "1"], {
      home,
      cwd: project,
      env: { SCOOT_BACKEND_BASE_URL: server.url, HOME: userHome },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(server.completions()).toHaveLength(2);
    expect(fs.existsSync(target)).toBe(false);
    expect(seen(0)).toMatch(/Read-only file system/);
  });
});
