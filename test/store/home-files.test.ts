/**
 * Hostile inputs round two, item 7, through the built CLI with real FIFOs and symlinks: files
 * planted in the home never hang a command, never grow without bound, and are never written
 * through. Each command either refuses with a message naming the file, or skips the entry with
 * a warning and goes on.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CONFIG_MAX_BYTES } from "../../src/core/safe-open.js";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-h2-home-" });
let outside: string;
beforeEach(() => {
  outside = tempDir("scoot-h2-outside-");
});
afterEach(async () => {
  removeDir(outside);
});

function mkfifo(p: string): void {
  execFileSync("mkfifo", [p]);
}

const final = { reply: { thought: "t", action: "final", action_input: "ok" } };

describe("item 7: the configuration file", () => {
  it("a symlink to /dev/zero is refused at once (exit 2), for config and -e", async () => {
    fs.symlinkSync("/dev/zero", path.join(scene.home, "config.toml"));
    for (const args of [["config"], ["-e", "g"]]) {
      const r = await runCli(args, { home: scene.home, timeoutMs: 20_000 });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/config\.toml is a device, not a regular file; refused/);
    }
  });

  it("a FIFO does not hang config or doctor", async () => {
    mkfifo(path.join(scene.home, "config.toml"));
    const c = await runCli(["config"], { home: scene.home, timeoutMs: 20_000 });
    expect(c.code).toBe(2);
    expect(c.stderr).toMatch(/config\.toml is a FIFO \(named pipe\), not a regular file/);
    const d = await runCli(["doctor"], { home: scene.home, timeoutMs: 20_000 });
    expect(d.code).not.toBe(0);
    expect(d.stdout + d.stderr).toMatch(/FIFO/);
  });

  it(`a config over ${CONFIG_MAX_BYTES} bytes is refused naming the limit`, async () => {
    fs.writeFileSync(path.join(scene.home, "config.toml"), `# ${"x".repeat(CONFIG_MAX_BYTES)}\n`);
    const r = await runCli(["config"], { home: scene.home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`the limit is ${CONFIG_MAX_BYTES} bytes`);
  });

  it("a symlink to a regular config file still works (dotfile managers)", async () => {
    fs.writeFileSync(path.join(outside, "real.toml"), "[agent]\nmax_turns = 7\n");
    fs.symlinkSync(path.join(outside, "real.toml"), path.join(scene.home, "config.toml"));
    const r = await runCli(["config"], { home: scene.home });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/max_turns.*7/);
  });
});

describe("item 7: the stores", () => {
  it("sessions list skips a dangling symlink, a FIFO and a link out of the home, with warnings", async () => {
    scene.server = await startScriptedServer([final]);
    const ok = await runCli(["-e", "good goal", "--session-id", "good"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(ok.code).toBe(0);
    const sessions = path.join(scene.home, "state", "sessions");
    fs.symlinkSync(path.join(outside, "nothing.jsonl"), path.join(sessions, "dangling.jsonl"));
    mkfifo(path.join(sessions, "fifo.jsonl"));
    fs.writeFileSync(path.join(outside, "other.jsonl"), '{"role":"user","content":"outside secret"}\n');
    fs.symlinkSync(path.join(outside, "other.jsonl"), path.join(sessions, "linked.jsonl"));
    const r = await runCli(["sessions", "list"], { home: scene.home, timeoutMs: 20_000 });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.stdout).toContain("good");
    expect(r.stdout).not.toContain("outside secret");
    expect(r.stderr).toMatch(/skipped dangling\.jsonl: .*symlink/);
    expect(r.stderr).toMatch(/skipped fifo\.jsonl: .*FIFO/);
    expect(r.stderr).toMatch(/skipped linked\.jsonl: .*symlink/);
  });

  it("an audit log symlinked elsewhere is never written through; the run stops with a clear error", async () => {
    const target = path.join(outside, "victim.txt");
    fs.writeFileSync(target, "untouched\n");
    fs.mkdirSync(path.join(scene.home, "logs"), { recursive: true });
    fs.symlinkSync(target, path.join(scene.home, "logs", "audit.jsonl"));
    scene.server = await startScriptedServer([final]);
    const r = await runCli(["-e", "g"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/audit\.jsonl is a symlink; Scoot does not write through it/);
    expect(fs.readFileSync(target, "utf8")).toBe("untouched\n");
    // Nothing ran without its record: the model was never asked.
    expect(scene.server.completions()).toHaveLength(0);

    const show = await runCli(["audit", "show", "x"], { home: scene.home, timeoutMs: 20_000 });
    expect(show.code).not.toBe(0);
    expect(show.stderr).toMatch(/^scoot audit show: .*audit\.jsonl is a symlink/);
  });

  it("a session transcript symlinked elsewhere is never written through", async () => {
    const target = path.join(outside, "victim.jsonl");
    fs.writeFileSync(target, "untouched\n");
    fs.mkdirSync(path.join(scene.home, "state", "sessions"), { recursive: true });
    fs.symlinkSync(target, path.join(scene.home, "state", "sessions", "s1.jsonl"));
    scene.server = await startScriptedServer([final]);
    const r = await runCli(["-e", "g", "--session-id", "s1"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/s1\.jsonl is a symlink; Scoot does not write through it/);
    expect(fs.readFileSync(target, "utf8")).toBe("untouched\n");
  });

  it("session show names a FIFO or a symlinked transcript instead of failing inside", async () => {
    const sessions = path.join(scene.home, "state", "sessions");
    fs.mkdirSync(sessions, { recursive: true });
    mkfifo(path.join(sessions, "f.jsonl"));
    fs.symlinkSync("/etc/passwd", path.join(sessions, "p.jsonl"));
    const f = await runCli(["session", "show", "f"], { home: scene.home, timeoutMs: 20_000 });
    expect(f.code).toBe(1);
    expect(f.stderr).toMatch(/^scoot session show: .*f\.jsonl is a FIFO/);
    const p = await runCli(["session", "show", "p"], { home: scene.home });
    expect(p.code).toBe(1);
    expect(p.stderr).toMatch(/^scoot session show: .*p\.jsonl is a symlink/);
    expect(p.stdout).toBe("");
  });

  it("a FIFO as the audit log does not hang audit show", async () => {
    fs.mkdirSync(path.join(scene.home, "logs"), { recursive: true });
    mkfifo(path.join(scene.home, "logs", "audit.jsonl"));
    const r = await runCli(["audit", "show", "x"], { home: scene.home, timeoutMs: 20_000 });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/audit\.jsonl is a FIFO/);
  });
});
