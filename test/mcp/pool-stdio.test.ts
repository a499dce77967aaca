import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { helperSearchPath } from "../../src/core/host-helper-env.js";
import { createMcpPool, type McpPool } from "../../src/mcp/pool.js";
import { bwrapWorks, processesWith, uniqueSleepArg, waitForProcess } from "../helpers/procs.js";
import {
  everythingStdio,
  FIXTURES,
  pidsIn,
  processGone,
  server,
  spawnsIn,
  tempDir,
  waitFor,
} from "./helpers.js";

const CALL_MS = 20_000;

let dir: string;
let pools: McpPool[] = [];

function pool(...args: Parameters<typeof createMcpPool>): McpPool {
  const p = createMcpPool(...args);
  pools.push(p);
  return p;
}

function fresh(): string {
  dir = tempDir();
  return path.join(dir, "spawned.txt");
}

afterEach(async () => {
  await Promise.all(pools.map((p) => p.close()));
  pools = [];
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function hangServer(name: string, marker: string, allowed: string[], stubborn = false) {
  return server({
    name,
    command: process.execPath,
    args: [path.join(FIXTURES, "hang-server.mjs"), ...(stubborn ? ["--stubborn"] : [])],
    env: [{ name: "MARKER", value: marker }],
    allowed_tools: allowed,
  });
}

/** A server that starts (and says so in $MARKER) but never answers the handshake. */
function muteServer(marker: string) {
  const script = `require("fs").appendFileSync(process.env.MARKER, process.pid + "\\n"); process.stdin.resume();`;
  return server({
    name: "mute",
    command: process.execPath,
    args: ["-e", script],
    env: [{ name: "MARKER", value: marker }],
    allowed_tools: ["t"],
  });
}

describe("stdio: a call to the reference server", () => {
  it("renders the echo text, reuses one child for the run, and reaps it at close", async () => {
    const marker = fresh();
    const p = pool([everythingStdio("ev", marker, ["echo"])], { env: process.env, timeoutMs: CALL_MS });
    expect(await p.call("ev", "echo", { message: "hello scoot" })).toEqual({
      ok: true,
      value: "Echo: hello scoot",
    });
    expect(await p.call("ev", "echo", { message: "again" })).toEqual({ ok: true, value: "Echo: again" });
    const pids = pidsIn(marker);
    expect(pids).toHaveLength(1);
    await p.close();
    expect(processGone(pids[0]!)).toBe(true);
  });

  it("gives the child only the safe variables plus its configured env", async () => {
    const marker = fresh();
    const env = { ...process.env, SCOOT_TEST_API_TOKEN: "tok-should-not-leak", PATH: process.env.PATH };
    const p = pool([everythingStdio("ev", marker, ["get-env"])], { env, timeoutMs: CALL_MS });
    const r = await p.call("ev", "get-env", {});
    expect(r.ok).toBe(true);
    const seen = JSON.parse(r.ok ? r.value : "{}") as Record<string, string>;
    expect(seen.MARKER).toBe(marker);
    // The caller's PATH less what lies in the project (here the repository's node_modules/.bin).
    expect(seen.PATH).toBe(helperSearchPath(process.env.PATH ?? "", process.cwd()));
    expect(seen.PATH).not.toContain(path.join(process.cwd(), "node_modules"));
    expect(JSON.stringify(seen)).not.toContain("tok-should-not-leak");
  });

  it("describes binary and linked content instead of dumping it", async () => {
    const marker = fresh();
    const allowed = ["get-tiny-image", "get-resource-links", "get-resource-reference"];
    const p = pool([everythingStdio("ev", marker, allowed)], { env: process.env, timeoutMs: CALL_MS });
    const img = await p.call("ev", "get-tiny-image", {});
    expect(img.ok).toBe(true);
    expect(img.ok && img.value).toMatch(/\[image image\/png, \d+ bytes\]/);
    expect(img.ok && img.value).not.toMatch(/iVBORw0KGgo/);
    const links = await p.call("ev", "get-resource-links", { count: 2 });
    expect(links.ok && links.value).toMatch(/\[resource link demo:\/\/resource\/dynamic\/\w+\/1 "[^"]+"/);
    const ref = await p.call("ev", "get-resource-reference", { resourceType: "Text", resourceId: 1 });
    expect(ref.ok && ref.value).toMatch(
      /\[resource demo:\/\/resource\/dynamic\/text\/1 text\/plain\]\nResource 1:/,
    );
  });

  it("passes the server's stderr to the sink, never to Scoot's terminal", async () => {
    const marker = fresh();
    const seen: string[] = [];
    const p = pool([everythingStdio("ev", marker, ["echo"])], {
      env: process.env,
      timeoutMs: CALL_MS,
      stderrSink: (name, text) => seen.push(`${name}:${text}`),
    });
    expect((await p.call("ev", "echo", { message: "x" })).ok).toBe(true);
    expect(await waitFor(() => seen.some((s) => s.startsWith("ev:") && /STDIO/.test(s)), 5000)).toBe(true);
  });
});

describe("stdio: fail closed before spawning", () => {
  it.each([
    [
      "a tool outside allowed_tools",
      "ev",
      "get-env",
      /not in allowed_tools of MCP server "ev" \(allowed: echo\)/,
    ],
    ["an unknown server", "nope", "echo", /unknown MCP server "nope" \(configured: ev, locked\)/],
    [
      "any tool when allowed_tools is empty",
      "locked",
      "echo",
      /allowed_tools is empty, so every tool is denied/,
    ],
  ])("denies %s and spawns nothing", async (_what, name, tool, message) => {
    const marker = fresh();
    const p = pool([everythingStdio("ev", marker, ["echo"]), everythingStdio("locked", marker, [])], {
      env: process.env,
      timeoutMs: CALL_MS,
    });
    const r = await p.call(name, tool, {});
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(message);
    expect(fs.existsSync(marker)).toBe(false);
    // The marker does work: an allowed call does spawn.
    expect((await p.call("ev", "echo", { message: "m" })).ok).toBe(true);
    expect(pidsIn(marker)).toHaveLength(1);
  });

  it("reports a command that cannot be started as an error result", async () => {
    fresh();
    const p = pool(
      [server({ name: "ghost", command: path.join(dir, "no-such-binary"), allowed_tools: ["x"] })],
      {
        env: process.env,
        timeoutMs: CALL_MS,
      },
    );
    const r = await p.call("ghost", "x", {});
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/MCP server "ghost" failed to connect: .*ENOENT/);
  });
});

describe("stdio: tool errors", () => {
  it.each([
    ["invalid arguments", "echo", {}, /Input validation error/],
    ["a tool the server does not have", "no-such-tool", {}, /no-such-tool not found/],
  ])("reports %s (isError) as an error result", async (_what, tool, args, message) => {
    const marker = fresh();
    const p = pool([everythingStdio("ev", marker, ["echo", "no-such-tool"])], {
      env: process.env,
      timeoutMs: CALL_MS,
    });
    const r = await p.call("ev", tool, args);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(message);
    // An error result does not break the connection.
    expect(await p.call("ev", "echo", { message: "still here" })).toEqual({
      ok: true,
      value: "Echo: still here",
    });
  });
});

describe("stdio: a crashed server", () => {
  it("killed between calls: the next call is an error, the child is reaped, no restart", async () => {
    const marker = fresh();
    const p = pool([everythingStdio("ev", marker, ["echo"])], { env: process.env, timeoutMs: CALL_MS });
    expect((await p.call("ev", "echo", { message: "1" })).ok).toBe(true);
    const [pid] = pidsIn(marker);
    process.kill(pid!, "SIGKILL");
    expect(await waitFor(() => processGone(pid!), 5000)).toBe(true);
    const next = await p.call("ev", "echo", { message: "2" });
    expect(next.ok).toBe(false);
    expect(!next.ok && next.error).toMatch(/MCP server "ev" closed its connection \(it exited or hung up\)/);
    const later = await p.call("ev", "echo", { message: "3" });
    expect(!later.ok && later.error).toMatch(/not restarted within a run/);
    expect(spawnsIn(marker)).toBe(1);
    await p.close();
    expect(fs.existsSync(`/proc/${pid}`)).toBe(false);
  });

  it("exiting during a call: that call fails at once (not at the deadline) and quotes stderr", async () => {
    const marker = fresh();
    const p = pool([hangServer("h", marker, ["crash"])], { env: process.env, timeoutMs: 60_000 });
    const r = await p.call("h", "crash", {});
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/closed its connection/);
    expect(!r.ok && r.error).toMatch(/about to crash on purpose/);
    expect(!r.ok && r.error).not.toMatch(/did not answer/);
    expect(spawnsIn(marker)).toBe(1);
    expect(await waitFor(() => pidsIn(marker).length === 0, 5000)).toBe(true);
  });
});

describe("stdio: deadlines", () => {
  it("a tool that never answers hits the deadline; the connection survives; close reaps the child", async () => {
    const marker = fresh();
    const p = pool([hangServer("h", marker, ["hang", "ok"], true)], { env: process.env, timeoutMs: 3000 });
    // Connect first, so the deadline below is all the hanging tool's.
    expect(await p.call("h", "ok", {})).toEqual({ ok: true, value: "fine" });
    const r = await p.call("h", "hang", {});
    expect(r).toEqual({
      ok: false,
      error: 'MCP server "h" tool "hang" timed out after 3 s (tools.timeout_ms = 3000): no answer',
    });
    expect(await p.call("h", "ok", {})).toEqual({ ok: true, value: "fine" });
    const [pid] = pidsIn(marker);
    expect(pidsIn(marker)).toHaveLength(1);
    expect(processGone(pid!)).toBe(false);
    // --stubborn ignores stdin EOF: close has to escalate to a signal, and still reaps it.
    await p.close();
    expect(processGone(pid!)).toBe(true);
  });

  it("a server that never completes the handshake fails the connection at the deadline", async () => {
    const marker = fresh();
    const p = pool([muteServer(marker)], { env: process.env, timeoutMs: 800 });
    const r = await p.call("mute", "t", {});
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(
      /did not complete its connection: timed out after 800 ms \(tools\.timeout_ms = 800\)/,
    );
    const again = await p.call("mute", "t", {});
    expect(!again.ok && again.error).toMatch(/not restarted within a run/);
    expect(spawnsIn(marker)).toBe(1);
    const pids = pidsIn(marker);
    await p.close();
    expect(pids.filter((pid) => !processGone(pid))).toEqual([]);
  });

  it("the caller's abort signal ends the wait", async () => {
    const marker = fresh();
    const p = pool([hangServer("h", marker, ["hang"])], { env: process.env, timeoutMs: 60_000 });
    const ac = new AbortController();
    const pending = p.call("h", "hang", {}, ac.signal);
    await waitFor(() => pidsIn(marker).length === 1, 10_000);
    setTimeout(() => ac.abort(), 200);
    const r = await pending;
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/was aborted/);
  });
});

describe("stdio: close", () => {
  it("is idempotent and later calls fail closed", async () => {
    const marker = fresh();
    const p = pool([everythingStdio("ev", marker, ["echo"])], { env: process.env, timeoutMs: CALL_MS });
    expect((await p.call("ev", "echo", { message: "x" })).ok).toBe(true);
    await p.close();
    await p.close();
    const r = await p.call("ev", "echo", { message: "y" });
    expect(!r.ok && r.error).toMatch(/pool is closed/);
    expect(spawnsIn(marker)).toBe(1);
  });

  it("during a pending connection: the call returns and the child is reaped", async () => {
    const marker = fresh();
    const p = pool([muteServer(marker)], { env: process.env, timeoutMs: 60_000 });
    const pending = p.call("mute", "t", {});
    expect(await waitFor(() => pidsIn(marker).length === 1, 10_000)).toBe(true);
    const pids = pidsIn(marker);
    await p.close();
    const r = await pending;
    expect(r.ok).toBe(false);
    expect(pids.filter((pid) => !processGone(pid))).toEqual([]);
  });
});

function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] === "Z";
  } catch {
    return true;
  }
}

describe("stdio: the server's whole process group is reaped at close", () => {
  it("an npx-style grandchild that ignores stdin EOF does not outlive the run", async () => {
    const marker = fresh();
    const launched = server({
      name: "wrapped",
      command: process.execPath,
      args: [path.join(FIXTURES, "launcher.mjs"), path.join(FIXTURES, "hang-server.mjs"), "--stubborn"],
      env: [{ name: "MARKER", value: marker }],
      allowed_tools: ["ok"],
    });
    const p = pool([launched], { env: process.env, timeoutMs: CALL_MS });
    const r = await p.call("wrapped", "ok", {});
    expect(r.ok, JSON.stringify(r)).toBe(true);
    const pids = pidsIn(marker);
    expect(pids).toHaveLength(2);
    await p.close();
    // A zombie nobody reaps (PID 1 in a container often does not) is not running.
    const survivors = pids.filter((pid) => !processGone(pid) && !isZombie(pid));
    for (const pid of survivors) process.kill(pid, "SIGKILL");
    expect(survivors).toEqual([]);
  });
});

describe("stdio: a server's setsid helper does not outlive the run", () => {
  let sleeps: string[] = [];
  afterEach(() => {
    // A failed assertion must not leave its helper behind either.
    for (const arg of sleeps) for (const pid of processesWith(`sleep ${arg}`)) process.kill(pid, "SIGKILL");
    sleeps = [];
  });
  function helperArg(): string {
    const arg = uniqueSleepArg(300);
    sleeps.push(arg);
    return arg;
  }
  function setsidServer(marker: string, sleepArg: string) {
    return server({
      name: "careless",
      command: process.execPath,
      args: [path.join(FIXTURES, "setsid-server.mjs"), sleepArg],
      env: [{ name: "MARKER", value: marker }],
      allowed_tools: ["ok"],
    });
  }

  it.skipIf(!bwrapWorks())(
    "in a PID namespace of its own (bubblewrap): the helper ends with the server",
    async () => {
      const marker = fresh();
      const sleepArg = helperArg();
      const warnings: string[] = [];
      const p = pool([setsidServer(marker, sleepArg)], {
        env: process.env,
        timeoutMs: CALL_MS,
        onWarning: (w) => warnings.push(w),
      });
      expect(await p.call("careless", "ok", {})).toEqual({ ok: true, value: "fine" });
      expect(await waitForProcess(`sleep ${sleepArg}`, 10_000)).toBe(true);
      // The server sees its own PID namespace: it is not pid 1 (bwrap's init is), and its pid
      // there is not its host pid.
      const [hostPid] = pidsIn(marker);
      expect(fs.readFileSync(marker, "utf8").trim()).not.toBe(String(hostPid));
      await p.close();
      const left = processesWith(`sleep ${sleepArg}`);
      for (const pid of left) process.kill(pid, "SIGKILL");
      expect(left).toEqual([]);
      expect(warnings).toEqual([]);
    },
  );

  it("a bwrap inside the project (which the model can write) is never run, not even to try it", async () => {
    const marker = fresh();
    const project = path.join(dir, "project");
    fs.mkdirSync(project);
    const ran = path.join(dir, "planted-bwrap-ran");
    const planted = path.join(project, "bwrap");
    fs.writeFileSync(planted, `#!/bin/sh\necho ran >> ${JSON.stringify(ran)}\nexit 1\n`, { mode: 0o755 });
    const warnings: string[] = [];
    const p = pool([setsidServer(marker, helperArg())], {
      env: process.env,
      timeoutMs: CALL_MS,
      projectRoot: project,
      bwrapPath: planted,
      onWarning: (w) => warnings.push(w),
    });
    expect(await p.call("careless", "ok", {})).toEqual({ ok: true, value: "fine" });
    await p.close();
    expect(fs.existsSync(ran)).toBe(false);
    expect(warnings[0]).toContain(`${planted} lies inside the project, where a command can replace it`);
  });

  it("without bubblewrap: found by its environment mark and ended, with a warning", async () => {
    const marker = fresh();
    const sleepArg = helperArg();
    const warnings: string[] = [];
    const p = pool([setsidServer(marker, sleepArg)], {
      env: process.env,
      timeoutMs: CALL_MS,
      bwrapPath: path.join(dir, "no-bwrap-here"),
      onWarning: (w) => warnings.push(w),
    });
    expect(await p.call("careless", "ok", {})).toEqual({ ok: true, value: "fine" });
    expect(await waitForProcess(`sleep ${sleepArg}`, 10_000)).toBe(true);
    // Unwrapped: the pid the server wrote is its host pid.
    expect(fs.readFileSync(marker, "utf8").trim()).toBe(String(pidsIn(marker)[0]));
    await p.close();
    expect(processesWith(`sleep ${sleepArg}`)).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /run without a PID namespace of their own: tools\.sandbox_bwrap_path = .*no-bwrap-here is not an executable file/,
    );
    expect(warnings[0]).toMatch(/environment mark/);
  });
});
