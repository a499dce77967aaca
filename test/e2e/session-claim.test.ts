/**
 * One live process per session id: a second `-e --session-id X` while a run holds
 * X is refused with exit 2 and writes nothing into X's transcript; after the run ends the id
 * is free again; a claim left by a dead process is taken over. On main the second process
 * interleaved its messages into the same file (and could clobber its rotation).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { waitFor } from "../drills/lib.js";
import { builtFile, collect, runCli, spawnCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-test-" });

const transcript = (id: string) => path.join(scene.home, "state", "sessions", `${id}.jsonl`);

describe("a session id in use by a live run", () => {
  it("is refused to a second process (exit 2), which writes nothing into it; free again afterwards", async () => {
    const slow = step("final", "first run done") as { reply: object };
    const server = await startScriptedServer([{ ...slow, delayMs: 2_000 }, step("final", "third run done")]);
    try {
      const first = spawnCli(["-e", "first goal", "--session-id", "shared"], {
        home: scene.home,
        env: { SCOOT_BACKEND_BASE_URL: server.url },
      });
      const firstDone = collect(first, { timeoutMs: 30_000 });
      await waitFor("the first run's backend call", () => server.completions().length > 0);
      const second = await runCli(["-e", "second goal", "--session-id", "shared"], {
        home: scene.home,
        env: { SCOOT_BACKEND_BASE_URL: server.url },
      });
      expect(second.code).toBe(2);
      expect(second.stderr).toMatch(
        /session "shared" is in use by a live run \(pid \d+\); wait for it to finish or choose another --session-id/,
      );

      const a = await firstDone;
      expect(a.code, a.stderr).toBe(0);
      expect(a.stdout).toBe("first run done\n");
      expect(fs.readFileSync(transcript("shared"), "utf8")).not.toContain("second goal");
      const third = await runCli(["-e", "third goal", "--session-id", "shared"], {
        home: scene.home,
        env: { SCOOT_BACKEND_BASE_URL: server.url },
      });
      expect(third.code, third.stderr).toBe(0);
      expect(fs.existsSync(`${transcript("shared")}.lock`)).toBe(false);
    } finally {
      await server.close();
    }
  });

  it("scoot undo of a session a live run holds says what to do instead, in words undo takes", async () => {
    // The run waits on a reply that never comes until the server closes.
    const server = await startScriptedServer([{ hang: true }]);
    try {
      const first = spawnCli(["-e", "first goal", "--session-id", "held", "--retries", "0"], {
        home: scene.home,
        env: { SCOOT_BACKEND_BASE_URL: server.url },
      });
      const firstDone = collect(first, { timeoutMs: 30_000 });
      await waitFor("the run's backend call", () => server.completions().length > 0);
      const undo = await runCli(["undo", "held"], { home: scene.home });
      expect(undo.code).toBe(1);
      expect(undo.stderr).toMatch(
        /^scoot undo: session "held" is in use by a live run \(pid \d+\); wait for it to finish, or type \/undo in that REPL \(it reverts its last goal\)/,
      );
      expect(undo.stderr).not.toMatch(/--session-id|--resume/);
      await server.close();
      expect((await firstDone).code).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("a claim left by a process that died is taken over", async () => {
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid!;
    fs.mkdirSync(path.dirname(transcript("orphan")), { recursive: true });
    fs.writeFileSync(`${transcript("orphan")}.lock`, `${dead} 0123456789abcdef`);
    const server = await startScriptedServer([step("final", "ok")]);
    try {
      const r = await runCli(["-e", "go", "--session-id", "orphan"], {
        home: scene.home,
        env: { SCOOT_BACKEND_BASE_URL: server.url },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(fs.existsSync(`${transcript("orphan")}.lock`)).toBe(false);
    } finally {
      await server.close();
    }
  });

  it("claimSession: re-entrant in one process, refused to another, released on exit", () => {
    const dir = path.join(scene.home, "sessions");
    fs.mkdirSync(dir);
    const script = `
      const m = await import(${JSON.stringify(builtFile("store/session.js"))});
      const a = m.claimSession(${JSON.stringify(dir)}, "x");
      const b = m.claimSession(${JSON.stringify(dir)}, "x");
      console.log(JSON.stringify({ a: a.ok, b: b.ok }));
      if (process.argv[1] === "hold") await new Promise((r) => setTimeout(r, 1500));
    `;
    const holder = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(JSON.parse(holder.stdout)).toEqual({ a: true, b: true });
    // Released at exit: a later process gets it.
    expect(fs.existsSync(path.join(dir, "x.jsonl.lock"))).toBe(false);
    fs.writeFileSync(path.join(dir, "x.jsonl.lock"), `${process.pid} 0123456789abcdef`);
    const refused = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(JSON.parse(refused.stdout)).toEqual({ a: false, b: false });
  });
});
