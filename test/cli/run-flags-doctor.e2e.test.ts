/**
 * What was broken before the live view (docs/keyboard.md "Choosing the backend for one run", "Health
 * checks"): the global backend flags are honoured by every run, doctor names the models a
 * server lists and really connects to MCP servers, `--trace` prints the answer once.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptedServer, startScriptedServer, step } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-broken-" });

const final = (answer: string) => step("final", answer, "t");
const completionModels = (s: ScriptedServer) =>
  s.completions().map((r) => (r.body as { model?: string }).model);

describe("global backend flags", () => {
  it('--model other -e sends model "other" (over the config file and the environment)', async () => {
    scene.server = await startScriptedServer([final("ok")]);
    fs.writeFileSync(path.join(scene.home, "config.toml"), '[backend]\nmodel = "from-file"\n');
    const r = await runCli(["--model", "other", "-e", "hi"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_BACKEND_MODEL: "from-env" },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(completionModels(scene.server)).toEqual(["other"]);
  });

  it("--base-url and --api choose the server and the wire API", async () => {
    scene.server = await startScriptedServer([final("via responses")]);
    const r = await runCli(["-e", "hi", "--base-url", scene.server.url, "--api", "responses"], {
      home: scene.home,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("via responses\n");
    expect(scene.server.completions().map((c) => c.path)).toEqual(["/v1/responses"]);
  });

  it("the REPL and serve honour --model too", async () => {
    scene.server = await startScriptedServer([final("one"), final("two")]);
    const env = { SCOOT_BACKEND_BASE_URL: scene.server.url };
    const repl = await runCli(["repl", "--model", "repl-model"], {
      home: scene.home,
      env,
      input: "a goal\n",
    });
    expect(repl.code, repl.stderr).toBe(0);
    const serve = await runCli(["serve", "--model", "serve-model"], {
      home: scene.home,
      env,
      input: `${JSON.stringify({ id: 1, method: "run", params: { goal: "go" } })}\n`,
    });
    expect(serve.code, serve.stderr).toBe(0);
    expect(completionModels(scene.server)).toEqual(["repl-model", "serve-model"]);
  });

  it.each([
    [["--api", "soap"], /--api "soap" is not one of chat, responses/],
    [
      ["--base-url", "ftp://x"],
      /--base-url: "ftp:\/\/x" uses ftp:\/\/; model servers are reached over http:\/\/ or https:\/\//,
    ],
    [["--model", " "], /--model needs a model name/],
  ])("a bad value %j is a usage error, nothing is sent", async (flags, message) => {
    scene.server = await startScriptedServer([final("never")]);
    const r = await runCli([...flags, "-e", "hi"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(scene.server.completions()).toHaveLength(0);
  });
});

describe("doctor", () => {
  it("WARNs when backend.model is not among the listed models and names them", async () => {
    scene.server = await startScriptedServer([], { models: ["alpha", "beta:7b"] });
    const r = await runCli(["doctor", "--model", "gamma"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    const line = r.stdout.split("\n").find((l) => /^\S+\s+backend\s/.test(l));
    expect(line).toMatch(/^WARN/);
    expect(line).toContain('backend.model "gamma" is not among them (listed: alpha, beta:7b)');
    const ok = await runCli(["doctor", "--model", "alpha"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(ok.stdout).toMatch(/^OK\s+backend\s.*alpha among them/m);
  });

  it("connects to each MCP server: OK with its tools, FAIL with the reason or an allowed tool it lacks", async () => {
    scene.server = await startScriptedServer([], { models: ["scripted-model"] });
    const everything = path.resolve("test/mcp/fixtures/everything-stdio.mjs");
    fs.writeFileSync(
      path.join(scene.home, "config.toml"),
      [
        "[tools]\ntimeout_ms = 8000\n",
        `[[mcp.servers]]\nname = "good"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(everything)}]\nallowed_tools = ["echo"]\n`,
        `[[mcp.servers]]\nname = "missing"\ncommand = "/nonexistent/mcp-server"\nallowed_tools = ["x"]\n`,
        `[[mcp.servers]]\nname = "silent"\ncommand = ${JSON.stringify(process.execPath)}\nargs = ["-e", "setInterval(() => {}, 1000)"]\nallowed_tools = ["x"]\n`,
        `[[mcp.servers]]\nname = "typo"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(everything)}]\nallowed_tools = ["echo", "get_env", "teleport"]\n`,
      ].join("\n"),
    );
    const r = await runCli(["doctor"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_BACKEND_MODEL: "scripted-model" },
      timeoutMs: 60_000,
    });
    const mcp = r.stdout.split("\n").filter((l) => /^\S+\s+mcp\s/.test(l));
    expect(mcp.find((l) => l.includes("server good "))).toMatch(/^OK .*connected, \d+ tools listed/);
    expect(mcp.find((l) => l.includes("server missing "))).toMatch(
      /^FAIL .*failed to connect: spawn \/nonexistent\/mcp-server ENOENT/,
    );
    expect(mcp.find((l) => l.includes("server silent "))).toMatch(
      /^FAIL .*did not complete its connection: timed out after 8 s \(tools\.timeout_ms = 8000\)/,
    );
    // Allowed tools the server does not list: named, with the closest real name and its list.
    const typo = mcp.find((l) => l.includes("server typo "));
    expect(typo).toMatch(
      /^FAIL .*allowed_tools names "get_env" \(closest: "get-env"\), "teleport", which the server does not list \(it lists: echo, .*get-env/,
    );
    expect(typo).not.toMatch(/"echo"/);
    expect(r.code).toBe(1);
  });
});

describe("--trace", () => {
  it("prints the answer once, on stdout, and no trace line inside it", async () => {
    scene.server = await startScriptedServer([final("the only answer")], { streaming: "sse", ssePieces: 6 });
    const r = await runCli(["--trace", "-e", "hi"], {
      home: scene.home,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("the only answer\n");
    expect(r.stderr).not.toContain("the only answer");
    expect(r.stderr).toContain("[trace] action: final (the answer is on stdout)");
  });
});
