/**
 * Hostile inputs round two, item 10, through the built CLI: `backend.api_key_cmd` runs in its
 * own process group, is finished when the command itself exits (a background child holding
 * stdout does not keep it "running"), has its whole group killed at the deadline, and is run
 * once per process (`doctor` included).
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { TOKEN_CMD_TIMEOUT_MS } from "../../src/config/secrets.js";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-h2-tok-" });

/** Live (not zombie) processes whose command line contains `needle`. */
function liveWith(needle: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ");
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
      if (cmdline.includes(needle) && state !== "Z") found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/**
 * `liveWith` once the kernel has finished the SIGKILLs: a killed process can still show as
 * running for a moment on a loaded machine. A survivor (the bug) would stay for the whole sleep.
 */
async function liveAfterKill(needle: string): Promise<number[]> {
  let found = liveWith(needle);
  for (let i = 0; i < 50 && found.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    found = liveWith(needle);
  }
  return found;
}

function configure(cmd: string): void {
  fs.writeFileSync(
    path.join(scene.home, "config.toml"),
    `[backend]\napi_key_env = ""\napi_key_cmd = ${JSON.stringify(cmd)}\n`,
  );
}

describe.skipIf(process.platform !== "linux")("item 10: the token command", () => {
  it("prints the token and leaves a child holding stdout: done at once, child killed, run once", async () => {
    const counter = path.join(scene.home, "count");
    const marker = "17.4242";
    configure(`echo run >> ${counter}; echo tok-from-cmd-123456; sleep ${marker} & exit 0`);
    scene.server = await startScriptedServer();
    const r = await runCli(["doctor"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(r.stdout + r.stderr).not.toMatch(/did not finish/);
    expect(r.stdout).toMatch(/token.*backend\.api_key_cmd/);
    // The probe carried the token the command printed.
    const auth = scene.server.requests.map((q) => q.headers.authorization).filter(Boolean);
    expect(auth.length).toBeGreaterThan(0);
    for (const a of auth) expect(a).toBe("Bearer tok-from-cmd-123456");
    expect(fs.readFileSync(counter, "utf8")).toBe("run\n");
    expect(await liveAfterKill(`sleep ${marker}`)).toEqual([]);
  });

  it(`a command past the ${TOKEN_CMD_TIMEOUT_MS / 1000} s deadline has its whole group killed`, async () => {
    const marker = "47.4242";
    configure(`sleep ${marker} & sleep ${marker}`);
    const r = await runCli(["config"], { home: scene.home, timeoutMs: TOKEN_CMD_TIMEOUT_MS + 20_000 });
    expect(r.stdout + r.stderr).toMatch(
      /backend\.api_key_cmd did not finish within 10 s \(its process group was killed\)/,
    );
    expect(await liveAfterKill(`sleep ${marker}`)).toEqual([]);
  }, 40_000);
});
