/**
 * MCP tools that stay true (docs/mcp.md "Tool lists that stay true", "Server processes"),
 * through the built CLI and the scripted model, with fixture servers on the official SDK:
 * - a server that changes its tool list mid-run and sends notifications/tools/list_changed:
 *   the next request describes the new tool, and its arguments are checked against its schema;
 * - a nested input schema: shown in full, and a wrong nested type is a correction naming its
 *   JSON path, never sent to the server;
 * - a server that leaves a `setsid` helper behind: nothing of it outlives the run, in a PID
 *   namespace (bubblewrap) and in the fallback without one (which warns).
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { bwrapWorks, processesWith, uniqueSleepArg } from "../helpers/procs.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";
import { FIXTURES } from "../mcp/helpers.js";

const scene = useScene({ home: "scoot-home-", project: "scoot-proj-" });
const q = (s: string) => JSON.stringify(s);
let calls: string;
let sleeps: string[] = [];

beforeEach(() => {
  calls = path.join(scene.home, "calls.jsonl");
});
afterEach(() => {
  // A failed assertion must not leave a helper behind.
  for (const arg of sleeps) for (const pid of processesWith(`sleep ${arg}`)) process.kill(pid, "SIGKILL");
  sleeps = [];
});

function serverEntry(name: string, script: string, allowed: string[], args: string[] = []): string {
  return [
    "[[mcp.servers]]",
    `name = ${q(name)}`,
    `command = ${q(process.execPath)}`,
    `args = [${[path.join(FIXTURES, script), ...args].map(q).join(", ")}]`,
    `env = [{ name = "CALLS", value = ${q(calls)} }]`,
    `allowed_tools = [${allowed.map(q).join(", ")}]`,
    "",
  ].join("\n");
}

async function run(config: string, script: ScriptItem[], env: Record<string, string> = {}) {
  fs.writeFileSync(path.join(scene.home, "config.toml"), config);
  scene.server = await startScriptedServer(script);
  return runCli(["--trace", "-e", "use the tools"], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url, ...env },
    timeoutMs: 60_000,
  });
}

function request(n: number): { role: string; content: string }[] {
  return (scene.server!.completions()[n]!.body as { messages: { role: string; content: string }[] }).messages;
}

/** The tool calls that reached the fixture server. */
function received(): { name: string; arguments?: unknown }[] {
  if (!fs.existsSync(calls)) return [];
  return fs
    .readFileSync(calls, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { name: string; arguments?: unknown });
}

describe("a tool list that changes mid-run", () => {
  it("after notifications/tools/list_changed the next request describes the new tool, checked against its schema", async () => {
    const r = await run(serverEntry("live", "changing-server.mjs", ["grow", "weather"]), [
      step("mcp_call", { server: "live", tool: "grow", args: {} }),
      step("mcp_call", { server: "live", tool: "weather", args: { city: 5 } }),
      step("mcp_call", { server: "live", tool: "weather", args: { city: "Oslo", days: 2 } }),
      step("final", "done"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const first = request(0)[0]!;
    expect(first.role).toBe("system");
    expect(first.content).toContain("  - grow args {}: Loads the weather plugin.");
    expect(first.content).toContain("  - weather (not in the server's tools/list)");
    // The request right after the call that changed the list describes the new tool.
    const second = request(1)[0]!.content;
    expect(second).toContain("  - weather args {city: string, days?: integer}: The forecast for a city.");
    expect(second).not.toContain("not in the server's tools/list");
    expect(r.stderr).toMatch(
      /\[trace\] mcp: tools of live changed \(notifications\/tools\/list_changed\): added weather/,
    );
    // The new tool's arguments were checked against its new schema: a correction, not a call.
    const correction = request(2).at(-1)!.content;
    expect(correction).toContain("not a valid step and nothing was executed");
    expect(correction).toContain("/city: must be string, got integer");
    expect(correction).toContain("live/weather takes args {city: string, days?: integer}");
    expect(request(3).at(-1)!.content).toContain("sunny in Oslo");
    expect(received()).toEqual([
      { name: "grow", arguments: {} },
      { name: "weather", arguments: { city: "Oslo", days: 2 } },
    ]);
    // The transcript records the new system prompt, so a resumed session starts from it.
    const sessions = path.join(scene.home, "state", "sessions");
    const transcript = fs
      .readdirSync(sessions)
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => fs.readFileSync(path.join(sessions, f), "utf8"))
      .join("\n");
    const systems = transcript
      .split("\n")
      .filter((l) => l.startsWith('{"role":"system"'))
      .map((l) => (JSON.parse(l) as { content: string }).content);
    expect(systems).toHaveLength(2);
    expect(systems[1]).toBe(second);
  }, 90_000);
});

describe("a nested input schema", () => {
  it("reaches the model in full; a wrong nested type is refused with its JSON path and never sent", async () => {
    const r = await run(serverEntry("kb", "nested-server.mjs", ["remember"]), [
      step("mcp_call", {
        server: "kb",
        tool: "remember",
        args: {
          entities: [
            { name: "Ada", observations: ["wrote the first program"] },
            { name: 7, observations: [] },
          ],
        },
      }),
      step("mcp_call", {
        server: "kb",
        tool: "remember",
        args: { entities: [{ name: "Ada", observations: ["wrote the first program"] }] },
      }),
      step("final", "done"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(request(0)[0]!.content).toContain(
      "  - remember args {entities: {name: string, observations: string[]}[]}: Stores entities",
    );
    const correction = request(1).at(-1)!.content;
    expect(correction).toContain("not a valid step and nothing was executed");
    expect(correction).toContain("/entities/1/name: must be string, got integer");
    expect(request(2).at(-1)!.content).toContain("remembered 1 entities");
    expect(received()).toEqual([
      {
        name: "remember",
        arguments: { entities: [{ name: "Ada", observations: ["wrote the first program"] }] },
      },
    ]);
  }, 90_000);
});

describe("a server's setsid helper ends with the run", () => {
  function helperArg(): string {
    const arg = uniqueSleepArg(300);
    sleeps.push(arg);
    return arg;
  }
  // The helper is seen running mid-run (bash unsandboxed: a sandboxed one has its own /proc).
  const script = (sleepArg: string) => [
    step("mcp_call", { server: "careless", tool: "ok", args: {} }),
    step(
      "bash",
      `for i in $(seq 100); do pgrep -f "sleep ${sleepArg}" >/dev/null && echo helper-running && break; sleep 0.1; done`,
    ),
    step("final", "done"),
  ];

  it.skipIf(!bwrapWorks())(
    "in a PID namespace of its own",
    async () => {
      const sleepArg = helperArg();
      const r = await run(
        serverEntry("careless", "setsid-server.mjs", ["ok"], [sleepArg]),
        script(sleepArg),
        {
          SCOOT_TOOLS_SANDBOX: "off",
        },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(request(1).at(-1)!.content).toContain("fine");
      expect(request(2).at(-1)!.content).toContain("helper-running");
      expect(processesWith(`sleep ${sleepArg}`)).toEqual([]);
      expect(r.stderr).not.toMatch(/without a PID namespace/);
    },
    90_000,
  );

  it("without bubblewrap: ended through its environment mark, and the run warns", async () => {
    const sleepArg = helperArg();
    const r = await run(serverEntry("careless", "setsid-server.mjs", ["ok"], [sleepArg]), script(sleepArg), {
      SCOOT_TOOLS_SANDBOX_BWRAP_PATH: path.join(scene.home, "no-bwrap-here"),
      SCOOT_TOOLS_SANDBOX: "off",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(request(1).at(-1)!.content).toContain("fine");
    expect(request(2).at(-1)!.content).toContain("helper-running");
    expect(processesWith(`sleep ${sleepArg}`)).toEqual([]);
    expect(r.stderr).toMatch(
      /scoot: warning: mcp: MCP stdio servers run without a PID namespace of their own: tools\.sandbox_bwrap_path = .*no-bwrap-here is not an executable file/,
    );
  }, 90_000);
});
