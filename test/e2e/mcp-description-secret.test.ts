/**
 * A server's tools/list is the server's text, and a server may echo its own credential into
 * a tool description or a schema string. Through a real stdio server (the official SDK) and
 * the built CLI: the configured secret reaches the model's request as [REDACTED], never as
 * the value, a forged observation marker is defused, and the tools cache holds neither.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { startScriptedServer, step } from "../helpers/scripted-server.js";

const LEAKY_SERVER = path.join(REPO_ROOT, "test/mcp/fixtures/leaky-server.mjs");
const SECRET = "leak-Zr4-mcp-credential-77";

const scene = useScene({ home: "scoot-home-", project: "scoot-proj-" });

const q = (s: string) => JSON.stringify(s);

function config(): string {
  return [
    "[tools]",
    'policy = "guarded"',
    "",
    "[[mcp.servers]]",
    'name = "leaky"',
    `command = ${q(process.execPath)}`,
    `args = [${q(LEAKY_SERVER)}]`,
    `env = [{ name = "LEAK_TOKEN", value = ${q(SECRET)}, secret = true }]`,
    'allowed_tools = ["lookup"]',
    "",
  ].join("\n");
}

describe("MCP tool descriptions carry no configured credential", () => {
  it("the prompt and the cache show [REDACTED] and a defused marker, never the value", async () => {
    fs.writeFileSync(path.join(scene.home, "config.toml"), config());
    scene.server = await startScriptedServer([step("final", "done")]);
    const r = await runCli(["-e", "look it up", "--trace"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/\[trace\] mcp: listed 1 tools of leaky/);

    const request = JSON.stringify(scene.server.completions()[0]!.body);
    expect(request).toContain("lookup");
    expect(request).not.toContain(SECRET);
    expect(request).toContain("[REDACTED]");
    expect(request).not.toMatch(/UNTRUSTED_OBSERVATION>>> obey/);

    const cacheDir = path.join(scene.home, "state", "mcp-tools");
    const files = fs.readdirSync(cacheDir);
    expect(files).toHaveLength(1);
    const cached = fs.readFileSync(path.join(cacheDir, files[0]!), "utf8");
    expect(cached).toContain("lookup");
    expect(cached).not.toContain(SECRET);
    expect(cached).toContain("[REDACTED]");
    expect(cached).not.toContain("UNTRUSTED_OBSERVATION");
  }, 90_000);

  it("a cache written by an older run with the value in it is redacted when read", async () => {
    fs.writeFileSync(path.join(scene.home, "config.toml"), config());
    scene.server = await startScriptedServer([step("final", "one")]);
    const first = await runCli(["-e", "g"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(first.code, first.stderr).toBe(0);
    await scene.server.close();
    const cacheDir = path.join(scene.home, "state", "mcp-tools");
    const file = path.join(cacheDir, fs.readdirSync(cacheDir)[0]!);
    // Plant the value as an older, unredacting version would have written it.
    const planted = JSON.parse(fs.readFileSync(file, "utf8"));
    planted.tools[0].description = `key ${SECRET} here`;
    planted.tools[0].inputSchema.properties.q.description = `by ${SECRET}`;
    fs.writeFileSync(file, JSON.stringify(planted));

    scene.server = await startScriptedServer([step("final", "two")]);
    const second = await runCli(["-e", "g", "--trace"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/described from the cache/);
    const request = JSON.stringify(scene.server.completions()[0]!.body);
    expect(request).not.toContain(SECRET);
    expect(request).toContain("key [REDACTED] here");
  }, 90_000);
});
