/**
 * Starting a stdio server (docs/mcp.md "Slow first starts"): a package launcher that may be
 * installing its package gets a first-start allowance over the deadline, and a call whose own
 * deadline passes meanwhile leaves the start running for the next call; a server that hangs at
 * start is reported with the last lines of its stderr, redacted. The launcher is a fake `npx`
 * that waits before it hands over to a real MCP server (test/mcp/fixtures/hang-server.mjs).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createMcpPool, type McpPool } from "../../src/mcp/pool.js";
import { FIXTURES, server, spawnsIn, tempDir } from "./helpers.js";

let dirs: string[] = [];
let pools: McpPool[] = [];

afterEach(async () => {
  await Promise.all(pools.map((p) => p.close()));
  pools = [];
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function pool(...args: Parameters<typeof createMcpPool>): McpPool {
  const p = createMcpPool(...args);
  pools.push(p);
  return p;
}

/**
 * A fake `npx` in a fresh directory that waits until `release` exists (an install under way)
 * and then runs the real server; `home` is the HOME the pool gives it (npx's cache lives there).
 */
function slowNpx(): { npx: string; home: string; marker: string; release: string } {
  const dir = tempDir();
  dirs.push(dir);
  const bin = path.join(dir, "bin");
  const home = path.join(dir, "home");
  fs.mkdirSync(bin);
  fs.mkdirSync(home);
  const npx = path.join(bin, "npx");
  const release = path.join(dir, "installed");
  const wait = `while [ ! -e ${JSON.stringify(release)} ]; do sleep 0.1; done`;
  const run = `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(FIXTURES, "hang-server.mjs"))}`;
  fs.writeFileSync(npx, `#!/bin/sh\n${wait}\n${run}\n`, { mode: 0o755 });
  return { npx, home, marker: path.join(dir, "spawned.txt"), release };
}

function npxServer(fake: ReturnType<typeof slowNpx>) {
  return server({
    name: "slow",
    command: fake.npx,
    args: ["-y", "slow-mcp-server@1.0.0"],
    env: [{ name: "MARKER", value: fake.marker }],
    allowed_tools: ["ok"],
  });
}

/** Releases the fake install once the launcher has been waiting past the deadline. */
function releaseAfter(fake: ReturnType<typeof slowNpx>, ms: number): void {
  setTimeout(() => fs.writeFileSync(fake.release, ""), ms);
}

describe("a package launcher's first start", () => {
  it("is not cut off at the deadline while npx installs: it gets the first-start allowance", async () => {
    const fake = slowNpx();
    const p = pool([npxServer(fake)], {
      env: { ...process.env, HOME: fake.home, npm_config_cache: undefined, NPM_CONFIG_CACHE: undefined },
      timeoutMs: 300,
      installAllowanceMs: 120_000,
    });
    releaseAfter(fake, 1500);
    const probe = await p.probe("slow");
    expect(probe).toEqual({ ok: true, value: { tools: ["hang", "crash", "ok"] } });
    expect(spawnsIn(fake.marker)).toBe(1);
  });

  it("a call whose deadline passes meanwhile says the server is still starting; the next call uses that start", async () => {
    const fake = slowNpx();
    const p = pool([npxServer(fake)], {
      env: { ...process.env, HOME: fake.home, npm_config_cache: undefined, NPM_CONFIG_CACHE: undefined },
      timeoutMs: 60_000,
      installAllowanceMs: 120_000,
    });
    // As a run's tool deadline does: the call's signal fires while the launcher is still installing.
    const stop = new AbortController();
    setTimeout(() => stop.abort(new DOMException("deadline of 300 ms", "TimeoutError")), 300);
    const first = await p.call("slow", "ok", {}, stop.signal);
    expect(first.ok).toBe(false);
    expect(!first.ok && first.error).toBe(
      'the call to MCP server "slow" timed out after 60 s (tools.timeout_ms = 60000); the server is still starting (npx installing slow-mcp-server@1.0.0, which may take up to 180 s on a first start) and a later call will use it',
    );
    fs.writeFileSync(fake.release, "");
    expect(await p.call("slow", "ok", {})).toEqual({ ok: true, value: "fine" });
    expect(spawnsIn(fake.marker)).toBe(1);
  });

  it("no allowance when npx's cache already holds the package: the deadline says it was not an install", async () => {
    const fake = slowNpx();
    const cached = path.join(fake.home, ".npm", "_npx", "0123abcd", "node_modules", "slow-mcp-server");
    fs.mkdirSync(cached, { recursive: true });
    fs.writeFileSync(
      path.join(cached, "package.json"),
      JSON.stringify({ name: "slow-mcp-server", version: "1.0.0" }),
    );
    const p = pool([npxServer(fake)], {
      env: { ...process.env, HOME: fake.home, npm_config_cache: undefined, NPM_CONFIG_CACHE: undefined },
      timeoutMs: 300,
      installAllowanceMs: 120_000,
    });
    const probe = await p.probe("slow");
    fs.writeFileSync(fake.release, "");
    expect(probe.ok).toBe(false);
    expect(!probe.ok && probe.error).toMatch(
      /^MCP server "slow" did not complete its connection: timed out after 300 ms \(tools\.timeout_ms = 300\)$/,
    );
  });
});

describe("a server that hangs at start", () => {
  it("is reported with the last lines of its stderr, redacted", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const marker = path.join(dir, "spawned.txt");
    const p = pool(
      [
        server({
          name: "stuck",
          command: process.execPath,
          args: [path.join(FIXTURES, "stderr-hang-server.mjs")],
          env: [{ name: "MARKER", value: marker }],
          allowed_tools: ["t"],
        }),
      ],
      { env: process.env, timeoutMs: 4000 },
    );
    const probe = await p.probe("stuck");
    expect(probe.ok).toBe(false);
    const error = probe.ok ? "" : probe.error;
    expect(error).toContain(
      'MCP server "stuck" did not complete its connection: timed out after 4 s (tools.timeout_ms = 4000); its stderr ends with: starting step 5 | starting step 6 | starting step 7 | connecting with Authorization: [REDACTED] | waiting for the database lock',
    );
    expect(error).not.toContain("abcdefghijklmnop123456");
    expect(error).not.toContain("starting step 4");
    // A later call says the same, at once.
    const again = await p.call("stuck", "t", {});
    expect(!again.ok && again.error).toContain(
      "waiting for the database lock; it is not restarted within a run",
    );
  });
});
