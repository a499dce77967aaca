/**
 * `doctor`'s context check builds the system prompt a run would send, AGENTS.md included, so the
 * AGENTS.md it counts is cut at `agent.project_instructions_max_bytes` as a run's is
 * (docs/context.md "Project instructions"), not at the default.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { removeDir, runInProcess, tempDir } from "../helpers/cli.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/scripted-server.js";
import { flavourRoutes } from "../helpers/window-servers.js";

let home: string;
let project: string;
let server: ScriptedServer;

beforeEach(async () => {
  home = tempDir("scoot-home-");
  project = tempDir("scoot-proj-");
  // 20 KB of guidance: under the default 32 KiB, far over the 2 KiB set below.
  fs.writeFileSync(path.join(project, "AGENTS.md"), `# Guidance\n${"Keep functions short. ".repeat(1000)}\n`);
  server = await startScriptedServer([], { routes: flavourRoutes("vllm", 32_768) });
});
afterEach(async () => {
  await server.close();
  removeDir(home);
  removeDir(project);
});

async function promptBytes(env: Record<string, string> = {}): Promise<number> {
  const r = await runInProcess(["doctor"], {
    home,
    cwd: project,
    env: { SCOOT_BACKEND_BASE_URL: server.url, ...env },
  });
  const m = /system prompt (\d+) bytes/.exec(r.stdout);
  if (!m) throw new Error(`no context line in:\n${r.stdout}${r.stderr}`);
  return Number(m[1]);
}

it("counts AGENTS.md up to agent.project_instructions_max_bytes", async () => {
  const full = await promptBytes();
  const cut = await promptBytes({ SCOOT_AGENT_PROJECT_INSTRUCTIONS_MAX_BYTES: "2048" });
  expect(full).toBeGreaterThan(20_000);
  expect(cut).toBeLessThan(full - 17_000);
});
