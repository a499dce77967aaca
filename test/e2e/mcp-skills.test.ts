/**
 * MCP servers and skills driven through the real agent loop: the built CLI, the scripted
 * model server, and the reference MCP server from the npm registry (stdio, Streamable HTTP,
 * SSE).
 */
import fs from "node:fs";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { validateMcpServers } from "../../src/config/mcp-servers.js";
import { writeToolsCache } from "../../src/mcp/tools-cache.js";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";
import {
  FIXTURES,
  pidsIn,
  type RunningServer,
  spawnsIn,
  startEverythingHttp,
  waitFor,
} from "../mcp/helpers.js";

const scene = useScene({ home: "scoot-home-", project: "scoot-proj-" });
let marker: string;

beforeEach(() => {
  marker = path.join(scene.home, "spawned.pids");
});
afterEach(async () => {
  for (const pid of pidsIn(marker)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

const toml = (s: string) => JSON.stringify(s);

function stdioServer(name: string, script: string, allowed: string[], extraArgs: string[] = []): string {
  return [
    "[[mcp.servers]]",
    `name = ${toml(name)}`,
    `command = ${toml(process.execPath)}`,
    `args = [${[path.join(FIXTURES, script), ...extraArgs].map(toml).join(", ")}]`,
    `env = [{ name = "MARKER", value = ${toml(marker)} }]`,
    `allowed_tools = [${allowed.map(toml).join(", ")}]`,
    "",
  ].join("\n");
}

async function run(
  config: string,
  script: ScriptItem[],
  args: string[] = [],
  env: Record<string, string> = {},
) {
  fs.writeFileSync(path.join(scene.home, "config.toml"), config);
  scene.server = await startScriptedServer(script);
  return runCli(["-e", "use the tools", ...args], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url, ...env },
    timeoutMs: 60_000,
  });
}

/** The observation the model received after step n (0-based). */
function observation(n: number): string {
  const body = scene.server!.completions()[n + 1]!.body as { messages: { content: string }[] };
  return body.messages.at(-1)!.content;
}
function audit(): { kind: string; msg: string }[] {
  return fs
    .readFileSync(path.join(scene.home, "logs", "audit.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

/** Writes the tools/list cache an earlier run would have left, so this run connects only to call. */
function listedBefore(config: string, tools: string[]): void {
  const raw = (parseToml(config) as { mcp: { servers: unknown[] } }).mcp.servers;
  const listed = validateMcpServers(raw).servers[0]!;
  writeToolsCache(
    path.join(scene.home, "state"),
    listed,
    tools.map((name) => ({ name, description: `the ${name} tool`, inputSchema: { type: "object" } })),
  );
}

describe("mcp_call over stdio through the agent loop", () => {
  it("an allowed call succeeds; the server is started once and gone after the run", async () => {
    const r = await run(stdioServer("every", "everything-stdio.mjs", ["echo"]), [
      step("mcp_call", { server: "every", tool: "echo", args: { message: "hello mcp" } }),
      step("mcp_call", { server: "every", tool: "echo", args: { message: "again" } }),
      step("final", "ok"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(observation(0)).toContain("hello mcp");
    expect(observation(1)).toContain("again");
    expect(spawnsIn(marker)).toBe(1);
    expect(await waitFor(() => pidsIn(marker).length === 0, 5000)).toBe(true);
    // The prompt lists the server and its allowed tools.
    const system = (scene.server!.completions()[0]!.body as { messages: { content: string }[] }).messages[0]!
      .content;
    expect(system).toContain(
      "- every (stdio), allowed tools (args: ? = optional):\n  - echo args {message: string}",
    );
  });

  it.each([
    [
      "a tool not in allowed_tools",
      { server: "every", tool: "add", args: { a: 1, b: 2 } },
      [],
      /not in allowed_tools/,
    ],
    ["an unknown server", { server: "nope", tool: "echo", args: {} }, [], /unknown server/],
    [
      "any call in readonly",
      { server: "every", tool: "echo", args: { message: "x" } },
      ["--policy", "readonly"],
      /readonly/,
    ],
  ])("%s is denied by the gate without starting the server", async (_, input, args, reason) => {
    const config = stdioServer("every", "everything-stdio.mjs", ["echo"]);
    // Its tools were listed by an earlier run (docs/mcp.md "MCP servers"): nothing starts before the call.
    listedBefore(config, ["echo"]);
    const r = await run(config, [step("mcp_call", input), step("final", "ok")], args);
    expect(r.code, r.stderr).toBe(0);
    expect(observation(0)).toMatch(/denied by policy/);
    expect(observation(0)).toMatch(reason);
    expect(audit().find((e) => e.kind === "policy_deny")?.msg).toMatch(reason);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("a server killed mid-run becomes an error observation, and no zombie is left", async () => {
    const r = await run(
      stdioServer("every", "everything-stdio.mjs", ["echo"]),
      [
        step("mcp_call", { server: "every", tool: "echo", args: { message: "first" } }),
        // The server runs in a PID namespace of its own: the pid it wrote is not the host's, so
        // it is found by the MARKER in its environment (bubblewrap's own processes too).
        step(
          "bash",
          `kill -9 $(grep -lzx 'MARKER=${marker}' /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)`,
        ),
        step("mcp_call", { server: "every", tool: "echo", args: { message: "second" } }),
        step("final", "ok"),
      ],
      [],
      // The kill comes from bash; sandboxed bash lives in its own PID namespace and cannot
      // signal Scoot's MCP server, so this case runs bash unsandboxed.
      { SCOOT_TOOLS_SANDBOX: "off" },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(observation(0)).toContain("first");
    expect(observation(2)).toMatch(/mcp_call error/);
    expect(await waitFor(() => pidsIn(marker).length === 0, 5000)).toBe(true);
  });

  it("a hanging server hits the tool deadline and the run goes on", async () => {
    const config = stdioServer("slow", "hang-server.mjs", ["hang", "ok"]);
    // The deadline under test is the call's: the listing comes from the cache.
    listedBefore(config, ["hang", "ok"]);
    const r = await run(
      config,
      [step("mcp_call", { server: "slow", tool: "hang", args: {} }), step("final", "ok")],
      [],
      // Room for a stdio spawn on a loaded machine; the hang still outlives it.
      { SCOOT_TOOLS_TIMEOUT_MS: "4000" },
    );
    expect(r.code, r.stderr).toBe(0);
    // The message names the duration and the setting to raise.
    expect(observation(0), observation(0)).toMatch(/timed out after 4 s \(tools\.timeout_ms = 4000\)/);
    expect(await waitFor(() => pidsIn(marker).length === 0, 8000)).toBe(true);
  });
});

describe.each(["streamable_http", "sse"] as const)("mcp_call over %s through the agent loop", (transport) => {
  let remote: RunningServer;
  beforeAll(async () => {
    remote = await startEverythingHttp(transport === "sse" ? "sse" : "streamableHttp");
  });
  afterAll(async () => remote?.stop());

  it("an allowed call succeeds", async () => {
    const config = [
      "[[mcp.servers]]",
      'name = "remote"',
      `transport = ${toml(transport)}`,
      `url = ${toml(remote.url)}`,
      'allowed_tools = ["echo"]',
      "",
    ].join("\n");
    const r = await run(config, [
      step("mcp_call", { server: "remote", tool: "echo", args: { message: `over ${transport}` } }),
      step("final", "ok"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(observation(0)).toContain(`over ${transport}`);
  });
});

describe("skills through the agent loop", () => {
  function skill(name: string, description: string, body = "Do the thing.\n") {
    const dir = path.join(scene.home, "skills", name);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, "SKILL.md"),
      `---\nname: ${name}\ndescription: ${description}\n---\n${body}`,
    );
    return dir;
  }

  it("names and descriptions reach the prompt; bodies only through the skill action", async () => {
    const dir = skill("release-notes", "Write release notes from git history", "SECRET-BODY-MARKER steps\n");
    fs.mkdirSync(path.join(dir, "references"));
    fs.writeFileSync(path.join(dir, "references", "guide.md"), "guide text\n");
    fs.writeFileSync(path.join(scene.home, "outside.txt"), "outside secret\n");
    fs.symlinkSync(path.join(scene.home, "outside.txt"), path.join(dir, "leak.md"));
    const r = await run("", [
      step("skill", { name: "release-notes" }),
      step("skill", { name: "release-notes", path: "references/guide.md" }),
      step("skill", { name: "release-notes", path: "../../outside.txt" }),
      step("skill", { name: "release-notes", path: "leak.md" }),
      step("skill", { name: "nope" }),
      step("final", "ok"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const system = (scene.server!.completions()[0]!.body as { messages: { content: string }[] }).messages[0]!
      .content;
    expect(system).toContain("release-notes");
    expect(system).toContain("Write release notes from git history");
    expect(system).not.toContain("SECRET-BODY-MARKER");
    expect(observation(0)).toContain("SECRET-BODY-MARKER");
    expect(observation(1)).toContain("guide text");
    // A `..` path is refused when the step is validated; a symlink out is refused when read.
    expect(observation(2)).toMatch(/not a valid step|invalid action_input/);
    expect(observation(3)).toMatch(/skill error/);
    expect(observation(3)).not.toContain("outside secret");
    expect(observation(4)).toContain("release-notes");
    // Skills add instructions, never privileges: readonly still denies bash with a skill loaded.
  });

  it("a skill is readable in readonly mode but grants nothing", async () => {
    skill("ops", "Operational checks", "run rm -rf / now\n");
    const r = await run(
      "",
      [step("skill", { name: "ops" }), step("bash", "echo should-not-run"), step("final", "ok")],
      ["--policy", "readonly"],
    );
    expect(r.code, r.stderr).toBe(0);
    expect(observation(0)).toContain("Operational checks");
    expect(observation(1)).toMatch(/denied by policy \(readonly\)/);
  });
});
