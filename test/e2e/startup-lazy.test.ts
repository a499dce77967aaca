/**
 * What a plain run leaves unloaded (docs/benchmarks.md "Startup against the floor"): the real
 * built CLI runs with a probe that lists, at exit, the modules the process loaded, Node's own
 * included. Node's fetch and WebSocket stack (undici) is a large part of Node 24's cost of
 * `import … from "node:http"` (its ES facade reads the lazy `WebSocket` export); Scoot talks
 * to the model with node:http and needs none of it. The control, a process that calls
 * `fetch`, shows the probe does see undici when it loads.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

const PROBE = path.join(REPO_ROOT, "test", "helpers", "module-probe.cjs");
const UNDICI = /internal\/deps\/undici\//;
/**
 * Builtins a trivial run has no use for, though modules on its path import them (the REPL's
 * line editor, DNS checks of http_request, metrics' gzip, util's extras): the bundle loads them on first use (scripts/bundle.mjs `LAZY`). `node:fs`'s ES
 * facade would load fs/promises and with it the line editor, so `node:fs` is a shared shim.
 */
const UNUSED_BUILTINS = [
  "NativeModule readline",
  "NativeModule internal/readline/interface",
  "NativeModule fs/promises",
  "NativeModule dns",
  "NativeModule vm",
  "NativeModule zlib",
  "NativeModule worker_threads",
  // Loaded by the first tool call that starts a process (bash, outline's grammar process).
  "NativeModule child_process",
  "NativeModule internal/util/parse_args/parse_args",
];

const scene = useScene({ home: "scoot-lazy-", nested: true, project: "scoot-lazy-project-" });

function probeFile(): string {
  return path.join(scene.base, `probe-${Date.now()}-${Math.random().toString(36).slice(2)}.txt`);
}

function read(file: string): string[] {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

/** The built CLI with the probe, against the scene's server: its result and the modules it loaded. */
async function probedRun(args: string[], input?: string) {
  const out = probeFile();
  const r = await runCli(args, {
    home: scene.home,
    cwd: scene.project,
    ...(input === undefined ? {} : { input }),
    env: {
      NODE_OPTIONS: `--require ${PROBE}`,
      SCOOT_TEST_MODULE_PROBE: out,
      SCOOT_BACKEND_BASE_URL: scene.server?.url,
    },
    timeoutMs: 60_000,
  });
  return { r, modules: read(out) };
}

describe("a plain run loads no more of Node than it uses", () => {
  it("a trivial -e run and --version load none of Node's fetch/WebSocket stack", async () => {
    scene.server = await startScriptedServer([step("final", "done")]);
    for (const args of [["-e", "say done"], ["--version"]]) {
      const { r, modules } = await probedRun(args);
      expect(r.code, r.stderr).toBe(0);
      // The probe saw Node's modules at all: the run did load node:http.
      expect(modules.some((m) => m === "NativeModule http")).toBe(args[0] === "-e");
      expect(modules.filter((m) => UNDICI.test(m))).toEqual([]);
      // The app is compiled through node:vm, with the code an earlier run kept
      // (src/app-code-cache.ts): a run loads vm, `--version` does not.
      const runOwn = args[0] === "-e" ? ["NativeModule vm"] : [];
      const unused = UNUSED_BUILTINS.filter((m) => !runOwn.includes(m));
      expect(modules.filter((m) => unused.includes(m))).toEqual([]);
    }
  });

  it("the lazily loaded builtins still work when a run uses them: a REPL line and a grep", async () => {
    scene.server = await startScriptedServer([
      step("grep", { pattern: "needle", path: "hay.txt" }),
      step("final", "found"),
    ]);
    fs.writeFileSync(path.join(scene.project, "hay.txt"), "a needle here\n");
    const { r, modules } = await probedRun([], "find the needle\n");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("found");
    // The REPL read its line through node:readline, loaded on first use.
    expect(modules).toContain("NativeModule readline");
    const last = scene.server.completions().at(-1)?.body as { messages: { content: string }[] };
    expect(last.messages.at(-1)?.content).toContain("a needle here");
  });

  it("the control: a process that calls fetch loads undici, and the probe sees it", () => {
    const out = probeFile();
    const r = spawnSync(process.execPath, ["--require", PROBE, "-e", 'fetch("data:,x").then(() => 0)'], {
      env: { ...process.env, SCOOT_TEST_MODULE_PROBE: out },
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    expect(read(out).some((m) => UNDICI.test(m))).toBe(true);
  });
});
