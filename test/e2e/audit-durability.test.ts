/**
 * Durability order, observed with strace on the real CLI: the `tool_call` record's
 * fdatasync on the audit log happens before the tool's process is spawned, and a denied call's
 * `policy_deny` record is fdatasync'ed too. On main there was no fdatasync at all.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { waitFor } from "../drills/lib.js";
import { CLI, cleanEnv, collect, REPO_ROOT } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

function haveStrace(): boolean {
  try {
    execFileSync("strace", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
const STRACE = haveStrace();
if (!STRACE) console.log("[audit durability] skipped: strace is not installed (.ci/run installs it)");

const scene = useScene({ home: "scoot-test-", nested: true });

/** Runs the CLI under strace -f, returning the trace lines (fdatasync with paths, process starts). */
async function traced(
  args: string[],
  url: string,
): Promise<{ code: number | null; trace: string[]; stderr: string }> {
  const out = path.join(scene.base, "strace.txt");
  const child = spawn(
    "strace",
    ["-f", "-y", "-qq", "-e", "trace=fdatasync,fsync,execve", "-o", out, process.execPath, CLI, ...args],
    {
      cwd: scene.base,
      env: cleanEnv({
        SCOOT_HOME: scene.home,
        SCOOT_BACKEND_BASE_URL: url,
        SCOOT_TOOLS_POLICY: "unrestricted",
      }),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const r = await collect(child, { timeoutMs: 60_000 });
  return { code: r.code, stderr: r.stderr, trace: fs.readFileSync(out, "utf8").split("\n") };
}

describe.skipIf(!STRACE)("audit durability order (strace)", () => {
  it("the tool_call record is fdatasync'ed before the tool's process is spawned", async () => {
    const server = await startScriptedServer([step("bash", "echo spawned"), step("final", "done")]);
    try {
      const r = await traced(["-e", "run a command"], server.url);
      expect(r.code, r.stderr).toBe(0);
      const live = path.join(scene.home, "logs", "audit.jsonl");
      const syncs = r.trace
        .map((l, i) => ({ l, i }))
        .filter(({ l }) => /fdatasync\(\d+<[^>]*audit\.jsonl>\)/.test(l) && l.includes(live));
      // execve lines: the first is node itself; the next one is the tool's shell (or its sandbox).
      const execs = r.trace
        .map((l, i) => ({ l, i }))
        .filter(({ l }) => /execve\(/.test(l) && !/ENOENT/.test(l));
      expect(execs.length, r.trace.join("\n")).toBeGreaterThan(1);
      const toolSpawn = execs[1]!;
      console.log(
        `[audit durability] ${syncs[0]?.l} (trace line ${syncs[0]?.i}) before ${toolSpawn.l.slice(0, 120)} (trace line ${toolSpawn.i})`,
      );
      expect(syncs.length, r.trace.join("\n")).toBeGreaterThan(0);
      expect(syncs[0]!.i).toBeLessThan(toolSpawn.i);
      // And it is the tool_call record that was flushed: it is on disk before the spawn, last.
      const events = fs
        .readFileSync(live, "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(events.map((e) => e.kind)).toContain("tool_call");
    } finally {
      await server.close();
    }
  });

  it("a policy_deny record is fdatasync'ed as well", async () => {
    const server = await startScriptedServer([
      step("file_read", { path: "/etc/shadow" }),
      step("final", "denied as expected"),
    ]);
    try {
      const out = path.join(scene.base, "strace.txt");
      const child = spawn(
        "strace",
        ["-f", "-y", "-qq", "-e", "trace=fdatasync", "-o", out, process.execPath, CLI, "-e", "read a secret"],
        {
          cwd: scene.base,
          env: cleanEnv({
            SCOOT_HOME: scene.home,
            SCOOT_BACKEND_BASE_URL: server.url,
            SCOOT_TOOLS_POLICY: "guarded",
          }),
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      const r = await collect(child, { timeoutMs: 60_000 });
      expect(r.code, r.stderr).toBe(0);
      const live = path.join(scene.home, "logs", "audit.jsonl");
      const kinds = fs
        .readFileSync(live, "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l).kind);
      expect(kinds).toContain("policy_deny");
      const syncs = fs
        .readFileSync(out, "utf8")
        .split("\n")
        .filter((l) => /fdatasync\(/.test(l) && l.includes(live));
      // One for the policy_deny record, one for the batched records at run end.
      expect(syncs.length).toBeGreaterThanOrEqual(2);
    } finally {
      await server.close();
    }
  });

  it("the gap record is written and fdatasync'ed before the evicted generation is unlinked", async () => {
    // On main the order was the reverse: unlink(audit.jsonl.1), then open the gaps file.
    const file = path.join(scene.base, "audit.jsonl");
    const out = path.join(scene.base, "strace.txt");
    const writer = path.join(REPO_ROOT, "test", "helpers", "audit-writer.mjs");
    const child = spawn(
      "strace",
      [
        "-f",
        "-y",
        "-qq",
        "-e",
        "trace=unlink,fdatasync",
        "-o",
        out,
        process.execPath,
        writer,
        file,
        "1",
        "40",
        "300",
        "1",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    const r = await collect(child, { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const trace = fs.readFileSync(out, "utf8").split("\n");
    const unlinkAt = trace.findIndex((l) => l.includes(`unlink("${file}.1")`));
    const gapSyncAt = trace.findIndex((l) => /fdatasync\(\d+</.test(l) && l.includes(`${file}.gaps.jsonl>`));
    expect(unlinkAt, trace.join("\n")).toBeGreaterThan(0);
    expect(gapSyncAt).toBeGreaterThan(-1);
    expect(gapSyncAt).toBeLessThan(unlinkAt);
  });

  it("on a signal exit (Ctrl-C twice) the batched records are flushed after the last write", async () => {
    const server = await startScriptedServer([step("bash", "sleep 4"), step("final", "never")]);
    try {
      const out = path.join(scene.base, "strace.txt");
      const child = spawn(
        "strace",
        [
          "-f",
          "-y",
          "-qq",
          "-e",
          "trace=write,fdatasync,execve",
          "-o",
          out,
          process.execPath,
          CLI,
          "-e",
          "sleep",
        ],
        {
          cwd: scene.base,
          env: cleanEnv({
            SCOOT_HOME: scene.home,
            SCOOT_BACKEND_BASE_URL: server.url,
            SCOOT_TOOLS_POLICY: "unrestricted",
          }),
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      const done = collect(child, { timeoutMs: 60_000 });
      // The node process is the first pid in the trace; wait until the tool's shell started.
      await waitFor(
        "the tool's shell",
        () => fs.existsSync(out) && /execve\("\/bin\/sh"/.test(fs.readFileSync(out, "utf8")),
      );
      const cliPid = Number(fs.readFileSync(out, "utf8").split(" ")[0]);
      process.kill(cliPid, "SIGINT");
      process.kill(cliPid, "SIGINT");
      const r = await done;
      expect(r.code, r.stderr).toBe(130);
      const live = path.join(scene.home, "logs", "audit.jsonl");
      const trace = fs.readFileSync(out, "utf8").split("\n");
      const onAudit = trace.filter((l) => l.includes(`<${live}>`));
      const lastWrite = onAudit.map((l) => /\bwrite\(/.test(l)).lastIndexOf(true);
      const lastSync = onAudit.map((l) => /fdatasync\(/.test(l)).lastIndexOf(true);
      expect(lastWrite, onAudit.join("\n")).toBeGreaterThan(-1);
      expect(lastSync).toBeGreaterThan(lastWrite);
    } finally {
      await server.close();
    }
  });
});
