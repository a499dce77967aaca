/**
 * Hostile inputs round two, item 4, through the built CLI: MCP servers that echo their
 * credentials back — an HTTP server that puts every request header (a `value_env` header and
 * an inline one) into its error body, and a stdio server that prints an `env` credential
 * (`secret = true`) in place of a protocol message — never put those values in clear text into the
 * transcript, the audit log, the model's context or the terminal.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptedServer, startScriptedServer, step } from "../helpers/scripted-server.js";

const FROM_ENV = "envcred-7f3a9c1e5b";
const INLINE = "inlinecred-2d8e4b6a0c";
const STDIO = "stdiocred-9a1b2c3d4e";

const scene = useScene({ home: "scoot-h2-mcp-" });
let model: ScriptedServer | undefined;
let echo: http.Server | undefined;

afterEach(async () => {
  await model?.close();
  model = undefined;
  if (echo) {
    echo.closeAllConnections();
    await new Promise<void>((r) => echo!.close(() => r()));
    echo = undefined;
  }
});

function everyText(): string {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && !p.endsWith("config.toml")) files.push(p);
    }
  };
  walk(scene.home);
  return files.map((f) => fs.readFileSync(f, "utf8")).join("\n");
}

describe("item 4: every configured MCP credential is redacted by every writer", () => {
  it("an HTTP server echoing its headers in an error", async () => {
    const seen: string[] = [];
    echo = http.createServer((req, res) => {
      req.resume();
      const dump = JSON.stringify(req.headers);
      seen.push(dump);
      res.writeHead(400, { "content-type": "text/plain" });
      res.end(`bad request, you sent ${dump}`);
    });
    await new Promise<void>((r) => echo!.listen(0, "127.0.0.1", () => r()));
    const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/mcp`;
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      [
        "[tools]",
        'policy = "unrestricted"',
        "[[mcp.servers]]",
        'name = "echoer"',
        'transport = "http"',
        `url = "${url}"`,
        'allowed_tools = ["t"]',
        'headers = [{ name = "X-Api-Key", value_env = "ECHOER_CRED" }, { name = "Private-Token", value = "' +
          INLINE +
          '", prefix = "tok " }]',
        "",
      ].join("\n"),
    );
    model = await startScriptedServer([
      step("mcp_call", { server: "echoer", tool: "t", args: {} }, "call"),
      { reply: { thought: "done", action: "final", action_input: "ok" } },
    ]);
    const r = await runCli(["-e", "call it", "--trace", "--session-id", "mcp1"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: model.url, ECHOER_CRED: FROM_ENV },
    });
    expect(r.code).toBe(0);
    // The attack reached the server: it did see both values.
    expect(seen.join("")).toContain(FROM_ENV);
    expect(seen.join("")).toContain(INLINE);
    const everywhere = [
      everyText(),
      r.stdout,
      r.stderr,
      JSON.stringify(model.completions().map((c) => c.body)),
    ];
    for (const text of everywhere) {
      expect(text).not.toContain(FROM_ENV);
      expect(text).not.toContain(INLINE);
    }
    const shown = await runCli(["session", "show", "mcp1"], { home: scene.home });
    expect(shown.stdout).not.toContain(FROM_ENV);
  });

  it("a stdio server printing its env value instead of a protocol message", async () => {
    const script = path.join(scene.home, "leaky.mjs");
    fs.writeFileSync(
      script,
      "process.stdin.once('data', () => { process.stdout.write('leak ' + process.env.LEAKY_VAL + '\\n'); " +
        "process.stderr.write('stderr leak ' + process.env.LEAKY_VAL + '\\n'); process.exit(3); });\n",
    );
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      [
        "[tools]",
        'policy = "unrestricted"',
        "[[mcp.servers]]",
        'name = "leaky"',
        'transport = "stdio"',
        `command = "${process.execPath}"`,
        `args = ["${script}"]`,
        'allowed_tools = ["t"]',
        // A credential in `env` is marked secret (a plain value is configuration, docs/mcp.md "MCP servers").
        `env = [{ name = "LEAKY_VAL", value = "${STDIO}", secret = true }]`,
        "",
      ].join("\n"),
    );
    model = await startScriptedServer([
      step("mcp_call", { server: "leaky", tool: "t", args: {} }, "call"),
      { reply: { thought: "done", action: "final", action_input: "ok" } },
    ]);
    const r = await runCli(["-e", "call it", "--trace"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: model.url },
    });
    expect(r.code).toBe(0);
    const everywhere = [
      everyText(),
      r.stdout,
      r.stderr,
      JSON.stringify(model.completions().map((c) => c.body)),
    ];
    for (const text of everywhere) expect(text).not.toContain(STDIO);
  });
});
