/**
 * A session's `.meta.json` sidecar is read by `sessions list`, `diff`, `undo` and `--continue`: a FIFO
 * (a blocking read), a symlink to /dev/zero (an endless read) or a symlink to a file elsewhere
 * planted under its name must not hang them nor be followed. Each command finishes within the
 * spawn timeout (the failure condition) and names what it skipped.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

/** Each command must be done by then; a hang is a rejected runCli. */
const FINISH_MS = 5_000;

const scene = useScene({ home: "scoot-meta-home-", project: "scoot-meta-proj-" });
let outside: string;
beforeEach(() => {
  outside = tempDir("scoot-meta-outside-");
});
afterEach(async () => {
  removeDir(outside);
});

/** One real session in `project`; returns its sidecar's path. */
async function oneSession(): Promise<string> {
  scene.server = await startScriptedServer([step("final", "done")]);
  const r = await runCli(["-e", "hello", "--session-id", "s1"], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
  });
  expect(r.code, r.stderr).toBe(0);
  const meta = path.join(scene.home, "state", "sessions", "s1.meta.json");
  expect(fs.existsSync(meta)).toBe(true);
  return meta;
}

const planters: Record<string, (meta: string) => void> = {
  "a FIFO": (meta) => execFileSync("mkfifo", [meta]),
  "a symlink to /dev/zero": (meta) => fs.symlinkSync("/dev/zero", meta),
  "a symlink to an outside file": (meta) => {
    const target = path.join(outside, "meta.json");
    fs.writeFileSync(target, JSON.stringify({ project_root: scene.project, created: "x" }));
    fs.symlinkSync(target, meta);
  },
};

describe("a planted .meta.json hangs nothing and is not followed", () => {
  for (const [kind, plant] of Object.entries(planters)) {
    it(`${kind}: sessions list, diff, undo and --continue finish and name it`, async () => {
      const meta = await oneSession();
      fs.rmSync(meta);
      plant(meta);
      const opts = { home: scene.home, cwd: scene.project, timeoutMs: FINISH_MS };

      // The sidecar is unreadable, so the session belongs to no directory: --all lists it.
      const list = await runCli(["sessions", "list", "--all"], opts);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toContain("s1");
      expect(list.stderr).toContain(`skipped ${meta}`);

      for (const command of ["diff", "undo"]) {
        const r = await runCli([command], opts);
        expect(r.stderr, command).toContain(`skipped ${meta}`);
      }

      const cont = await runCli(["-e", "again", "--continue"], {
        ...opts,
        env: { SCOOT_BACKEND_BASE_URL: scene.server!.url },
      });
      expect(cont.code).not.toBe(0);
      expect(cont.stderr).toContain(`skipped ${meta}`);
    }, 60_000);
  }
});
