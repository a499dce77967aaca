/**
 * `scoot acp` driven by a real ACP client from the npm registry: acpx (`.ci/run` installs acpx@0.19.1
 * with `npm install --no-save`). A session acpx creates and never prompts is reopened (session/resume)
 * by its next prompt; `--deny-all` answers every permission request with a refusal and the write does not
 * happen; after the agent has exited, a new prompt reloads the session and continues it.
 * `acpx --model <m> exec` picks any model the server lists from the session's answer.
 * acpx declares Node >= 22; when it cannot be found or run here the test is skipped and
 * says why.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI, REPO_ROOT, removeDir, tempDir } from "../helpers/cli.js";
import { processesWith } from "../helpers/procs.js";
import { type ScriptedServer, startScriptedServer, step } from "../helpers/scripted-server.js";

const ACPX = path.join(REPO_ROOT, "node_modules", ".bin", "acpx");

function whyNotRunnable(): string | undefined {
  if (!fs.existsSync(ACPX))
    return `acpx is not installed (${ACPX} missing; .ci/run installs it: npm install --no-save acpx@0.19.1)`;
  const r = spawnSync(ACPX, ["--version"], { encoding: "utf8", timeout: 30_000 });
  if (r.status !== 0) return `acpx --version failed (${r.error?.message ?? r.stderr.trim()})`;
  return undefined;
}
const skipReason = whyNotRunnable();
if (skipReason) console.log(`skipping the acpx tests: ${skipReason}`);

let base: string;
let home: string;
let project: string;
let server: ScriptedServer;

beforeEach(async () => {
  base = tempDir("scoot-acpx-");
  home = path.join(base, "scoot-home");
  project = path.join(base, "project");
  fs.mkdirSync(project);
  server = await startScriptedServer();
});
afterEach(async () => {
  await server.close();
  removeDir(base);
});

/** One acpx invocation against `scoot acp`; its queue owner lives 1 s after its last prompt. */
function acpx(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const agent = `${process.execPath} ${CLI} --scoot-home ${home} acp`;
  const child = spawn(ACPX, ["--agent", agent, "--cwd", project, "--ttl", "1", ...args], {
    env: {
      PATH: process.env.PATH,
      // acpx keeps its own session records under HOME.
      HOME: path.join(base, "acpx-home"),
      SCOOT_BACKEND_BASE_URL: server.url,
      SCOOT_BACKEND_MAX_RETRIES: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** Waits until no `scoot acp` of this test's home runs (acpx's queue owner let it go). */
async function agentGone(): Promise<void> {
  const until = Date.now() + 20_000;
  while (processesWith(home).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  expect(processesWith(home)).toEqual([]);
}

describe.skipIf(skipReason !== undefined)("acpx drives scoot acp", () => {
  it("prompts a never-prompted session, refuses a write under --deny-all, reloads after a restart", async () => {
    const created = await acpx(["sessions", "new"]);
    expect(created.code, created.stderr).toBe(0);
    const sessionId = created.stdout.trim();
    expect(sessionId).toMatch(/^acp-/);
    await agentGone();

    server.push(step("final", "first answer"));
    const first = await acpx(["--format", "json", "prompt", "remember tangerine"]);
    expect(first.code, first.stderr).toBe(0);
    // acpx reopens it with session/resume, which Scoot offers (session/load without the replay).
    expect(first.stdout).toMatch(/"method":"session\/(load|resume)"/);
    expect(first.stdout).toContain("first answer");
    await agentGone();

    server.push(
      step("file_write", JSON.stringify({ path: "x.txt", content: "x" })),
      step("final", "refused"),
    );
    const denied = await acpx(["--deny-all", "--format", "json", "prompt", "write x.txt"]);
    expect(denied.stdout).toContain('"method":"session/request_permission"');
    expect(fs.existsSync(path.join(project, "x.txt"))).toBe(false);
    await agentGone();

    server.push(step("final", "second answer"));
    const again = await acpx(["--format", "json", "prompt", "what did I ask first?"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/"method":"session\/(load|resume)"/);
    expect(again.stdout).toContain("second answer");
    // The reloaded conversation reached the model: the first goal and the refusal are in it.
    const last = JSON.stringify(server.completions().at(-1)!.body);
    expect(last).toContain("remember tangerine");
    expect(last).toContain("the user refused this file_write call");
  }, 120_000);

  it("--model picks a model the server lists other than the configured one", async () => {
    await server.close();
    server = await startScriptedServer([], { models: ["alpha", "beta"] });
    server.push(step("final", "answered by beta"));
    const r = await acpx(["--model", "beta", "--format", "json", "exec", "which model?"], {
      SCOOT_BACKEND_MODEL: "alpha",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("answered by beta");
    expect(server.completions().map((c) => (c.body as { model: string }).model)).toEqual(["beta"]);
    await agentGone();

    const refused = await acpx(["--model", "gamma", "exec", "hi"], { SCOOT_BACKEND_MODEL: "alpha" });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/Available models: alpha, beta/);
  }, 120_000);
});
