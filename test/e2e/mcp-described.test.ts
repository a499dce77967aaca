/**
 * MCP tools a model can use (docs/mcp.md "MCP servers"), with real servers from the npm registry
 * (`@modelcontextprotocol/server-filesystem`, `@modelcontextprotocol/server-memory`) driven by
 * the built CLI and the scripted model: the first request describes each allowed tool with its
 * schema's property names; a call missing a required argument is a correction naming it, and
 * reaches no server; the tools/list answer is cached per server configuration; and a plain
 * `env` value such as "readonly" is configuration, not a secret, while a `value_env` value
 * still is redacted everywhere.
 */
import fs from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { REPO_ROOT, runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step } from "../helpers/scripted-server.js";

const FS_SERVER = path.join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const MEMORY_SERVER = path.join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
const SECRET = "tok-Qx7-mcp-credential-91";

const scene = useScene({ home: "scoot-home-", project: "scoot-proj-" });

beforeEach(() => {
  fs.writeFileSync(path.join(scene.project, "notes.txt"), "the mode is readonly\n");
});

const q = (s: string) => JSON.stringify(s);

function config(): string {
  return [
    "[tools]",
    'policy = "guarded"',
    "",
    "[[mcp.servers]]",
    'name = "fs"',
    `command = ${q(process.execPath)}`,
    `args = [${q(FS_SERVER)}, ${q(scene.project)}]`,
    'env = [{ name = "SERVER_MODE", value = "readonly" }, { name = "FS_TOKEN", value_env = "SCOOT_TEST_FS_TOKEN" }]',
    'allowed_tools = ["read_text_file", "list_directory"]',
    "",
    "[[mcp.servers]]",
    'name = "memory"',
    `command = ${q(process.execPath)}`,
    `args = [${q(MEMORY_SERVER)}]`,
    `env = [{ name = "MEMORY_FILE_PATH", value = ${q(path.join(scene.home, "memory.jsonl"))} }]`,
    'allowed_tools = ["create_entities", "read_graph"]',
    "",
  ].join("\n");
}

async function run(script: ScriptItem[], args: string[] = []) {
  fs.writeFileSync(path.join(scene.home, "config.toml"), config());
  scene.server = await startScriptedServer(script);
  return runCli(["-e", "read the notes", ...args], {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_TEST_FS_TOKEN: SECRET },
    timeoutMs: 90_000,
  });
}

function systemPrompt(n = 0): string {
  const body = scene.server!.completions()[n]!.body as { messages: { role: string; content: string }[] };
  return body.messages[0]!.content;
}

function lastMessage(n: number): string {
  const body = scene.server!.completions()[n]!.body as { messages: { content: string }[] };
  return body.messages.at(-1)!.content;
}

function textArtifacts(): string {
  const sessions = path.join(scene.home, "state", "sessions");
  const files = fs.readdirSync(sessions).map((f) => path.join(sessions, f));
  return [path.join(scene.home, "logs", "audit.jsonl"), ...files]
    .map((f) => fs.readFileSync(f, "utf8"))
    .join("\n");
}

describe("MCP tools described, checked and cached (real servers from npm)", () => {
  it("the first request describes each allowed tool; a missing required argument is a correction naming it", async () => {
    const r = await run(
      [
        step("mcp_call", { server: "fs", tool: "read_text_file", args: {} }),
        step("mcp_call", {
          server: "fs",
          tool: "read_text_file",
          args: { path: path.join(scene.project, "notes.txt") },
        }),
        step("final", `SERVER_MODE is readonly; token ${SECRET}`),
      ],
      ["--trace"],
    );
    expect(r.code, r.stderr).toBe(0);
    const prompt = systemPrompt();
    // Each allowed tool with its description and its schema's property names; others are absent.
    expect(prompt).toMatch(/- read_text_file args \{path: string[^}]*\}: .*read/i);
    expect(prompt).toMatch(/- list_directory args \{path: string\}: \S+/);
    // A nested schema in full, not `object[]`.
    expect(prompt).toMatch(
      /- create_entities args \{entities: \{name: string, entityType: string, observations: string\[\]\}\[\]\}: \S+/,
    );
    expect(prompt).toMatch(/- read_graph args \{\}: \S+/);
    expect(prompt).not.toContain("write_file");
    // The call without `path` never reached the server: a correction names the field.
    expect(lastMessage(1)).toContain("not a valid step and nothing was executed");
    expect(lastMessage(1)).toMatch(/\/path: is required \(string\)/);
    // The valid call did reach it.
    expect(lastMessage(2)).toContain("the mode is readonly");
    expect(r.stderr).toMatch(/\[trace\] mcp: listed \d+ tools of fs \(cached for later runs\)/);

    // A plain env value is configuration: "readonly" stays readable everywhere; the value_env one does not.
    expect(r.stdout).toContain("SERVER_MODE is readonly");
    expect(r.stdout).not.toContain(SECRET);
    const written = textArtifacts();
    expect(written).toContain("the mode is readonly");
    expect(written).toContain("SERVER_MODE is readonly");
    expect(written).not.toContain(SECRET);
    expect(written).toContain("[REDACTED]");

    // `scoot config` shows the plain value.
    const shown = await runCli(["config"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_TEST_FS_TOKEN: SECRET },
    });
    expect(shown.stdout).toContain('value = "readonly"');
    expect(shown.stdout).not.toContain(SECRET);
  }, 120_000);

  it("a later run describes the tools from the cache, without connecting before the first turn", async () => {
    const first = await run([step("final", "one")], ["--trace"]);
    expect(first.code, first.stderr).toBe(0);
    const cacheDir = path.join(scene.home, "state", "mcp-tools");
    expect(fs.readdirSync(cacheDir)).toHaveLength(2);
    await scene.server!.close();

    const second = await run([step("final", "two")], ["--trace"]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/\[trace\] mcp: tools of fs described from the cache/);
    expect(second.stderr).toMatch(/\[trace\] mcp: tools of memory described from the cache/);
    expect(second.stderr).not.toMatch(/\[trace\] mcp: listed/);
    expect(systemPrompt()).toMatch(/- read_text_file args \{path: string/);
    // The same configuration maps to the same cache files: nothing new was listed or written.
    expect(fs.readdirSync(cacheDir)).toHaveLength(2);
  }, 120_000);
});
