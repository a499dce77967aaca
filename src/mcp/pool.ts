/**
 * The run's MCP connections. A server is started or connected on its first call and
 * reused until the run ends; `close()` shuts every one down and waits for stdio
 * children to be reaped.
 *
 * Decisions:
 * - Fail closed before anything is spawned or dialled: unknown server, tool not in
 *   `allowed_tools` (the gate checks too; this is the second lock), a header whose
 *   `value_env` is missing, an unreadable CA file.
 * - Every wait has the tool deadline: the connection (spawn/dial + initialize) and each
 *   call. A call that times out leaves the connection up (a slow tool is not a dead server).
 * - One connection per server per run. A server that fails to connect, or whose
 *   connection is lost (a stdio child that exits, for instance), stays unavailable for
 *   the rest of the run and later calls fail at once with the recorded reason. Restarting
 *   could repeat side effects of whatever crashed it, and a broken server would otherwise
 *   cost a full deadline on every retry of the model.
 */
import * as fs from "node:fs";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { resolveEnv, resolveHeaders } from "../config/mcp-servers.js";
import type { McpServerConfig } from "../config/schema.js";
import { helperWorkingDir } from "../core/host-helper-env.js";
import { terminateGroup } from "../core/process-group.js";
import { redact } from "../core/redact.js";
import type { Result } from "../core/types.js";
import type { StaleReason } from "./catalog.js";
import { createNodeFetch, type NodeFetch } from "./fetch.js";
import { npxHasCached, packageLaunch } from "./launcher.js";
import { reapMarked } from "./mark-reap.js";
import { renderToolResult } from "./render.js";
import type { McpService } from "./tools-info.js";
import { type BuiltTransport, buildTransport } from "./transport.js";

/** How Scoot introduces itself in `initialize`. */
export const CLIENT_INFO = { name: "scoot", version: "0.1.0" } as const;
/** Stderr kept per stdio server, quoted (its last lines, redacted) when it fails. */
const STDERR_TAIL_BYTES = 4096;
const STDERR_QUOTE_LINES = 5;
const STDERR_QUOTE_CHARS = 400;
/**
 * A package launcher (`npx`, `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`, `uvx`, `pipx run`) may
 * install the package before the server starts: its first start gets this long on top of the
 * deadline, unless npx's cache already holds the package (docs/mcp.md "Slow first starts").
 */
export const MCP_INSTALL_ALLOWANCE_MS = 120_000;
/** Bound on one server's shutdown: the SDK gives a stdio child 2 s after stdin EOF, then 2 s after SIGTERM. */
const CLOSE_WAIT_MS = 6000;
/** Bound on the polite session DELETE of Streamable HTTP at close. */
const END_SESSION_MS = 1000;
/**
 * How long close() waits for a child to leave the process table. The SDK's own close may
 * already be running (it starts one itself when initialize fails), so this covers its
 * whole EOF → SIGTERM → SIGKILL sequence.
 */
const REAP_WAIT_MS = CLOSE_WAIT_MS;
const REAP_POLL_MS = 20;
/** JSON-RPC codes the SDK uses for a lost connection and for its own request timeout. */
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;

/** The setting a run's MCP deadline comes from (SCOOT_TOOLS_TIMEOUT_MS in the environment). */
export const MCP_DEADLINE_SETTING = "tools.timeout_ms";

/** `30 s`, `2.5 s`, `800 ms`: a deadline as a person reads it. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return `${Number((ms / 1000).toFixed(1))} s`;
}

export interface McpPoolOptions {
  /** `backend.ca_file`: extra PEM roots for https servers. */
  caFile?: string;
  /** Where `value_env` headers and the stdio servers' inherited variables come from. */
  env: NodeJS.ProcessEnv;
  /** The tool deadline: applies to connecting and to each call. */
  timeoutMs: number;
  /**
   * Where `timeoutMs` comes from, named in every timeout message so the reader knows what to
   * raise (default: `tools.timeout_ms = <ms>`).
   */
  timeoutSetting?: string;
  /** A server's tools may have changed: it connected, or sent notifications/tools/list_changed. */
  onToolsStale?: (server: string, why: StaleReason) => void;
  /** Consulted after connecting, just before a call is sent: an error text refuses the call. */
  checkCall?: (server: string, tool: string, args: Record<string, unknown>) => Promise<string | undefined>;
  /** tools.sandbox_bwrap_path: the bubblewrap that gives each stdio server a PID namespace of its own. */
  bwrapPath?: string | undefined;
  /** Told once when stdio servers run without a PID namespace (docs/mcp.md "Server processes"). */
  onWarning?: (message: string) => void;
  /** Receives stdio servers' stderr; without it the text is kept only for error messages. */
  stderrSink?: (server: string, text: string) => void;
  /** The project root: stdio servers never start there nor search it (default: Scoot's own cwd). */
  projectRoot?: string;
  /** Scoot's home, where stdio servers start (default, and when it lies in the project: `/`). */
  scootHome?: string;
  /** The first-start allowance of a package launcher that may install (default MCP_INSTALL_ALLOWANCE_MS). */
  installAllowanceMs?: number;
}

export interface McpPool extends McpService {
  listTools(server: string, signal?: AbortSignal): Promise<Result<unknown[]>>;
  /** Connects and lists once (doctor): the names of the tools the server lists. */
  probe(serverName: string): Promise<Result<{ tools: string[] }>>;
  close(): Promise<void>;
}

interface Slot {
  server: McpServerConfig;
  connecting?: Promise<Result<Client>>;
  client?: Client;
  built?: BuiltTransport;
  /** Set once the server is unusable for the rest of the run; the text says why. */
  dead?: string;
  stderrTail: string;
  /** Aborts an in-flight initialize when the pool closes. */
  abort: AbortController;
  connected?: boolean;
  /** The SDK reported the connection closed (at any time, during connecting included). */
  lost?: boolean;
  shutdown?: Promise<void>;
  /** A launcher that may install the package first: what it is, and the extra time its start gets. */
  install?: { what: string; allowanceMs: number };
}

type Outcome<T> =
  | { kind: "ok"; value: T }
  | { kind: "error"; error: unknown }
  | { kind: "timeout" }
  | { kind: "aborted" };

/** Waits for `p`, but never past `ms` or the abort of `signal`; timers and listeners are removed. */
function settle<T>(p: Promise<T>, ms: number, signal?: AbortSignal): Promise<Outcome<T>> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve({ kind: "aborted" });
      return;
    }
    const done = (o: Outcome<T>) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(o);
    };
    const onAbort = () => done({ kind: "aborted" });
    const timer = setTimeout(() => done({ kind: "timeout" }), Math.max(1, ms));
    signal?.addEventListener("abort", onAbort, { once: true });
    p.then(
      (value) => done({ kind: "ok", value }),
      (error: unknown) => done({ kind: "error", error }),
    );
  });
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

function errorCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** Waits (bounded) until the child is no longer in the process table, zombie included. */
async function waitReaped(pid: number): Promise<void> {
  const until = Date.now() + REAP_WAIT_MS;
  while (!processGone(pid) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, REAP_POLL_MS));
  }
}

export function createMcpPool(servers: readonly McpServerConfig[], opts: McpPoolOptions): McpPool {
  const slots = new Map<string, Slot>();
  const allowance = opts.installAllowanceMs ?? MCP_INSTALL_ALLOWANCE_MS;
  for (const server of servers) {
    const slot: Slot = { server, stderrTail: "", abort: new AbortController() };
    const launch = server.transport === "stdio" ? packageLaunch(server.command, server.args) : undefined;
    if (launch && allowance > 0 && !npxHasCached(launch, opts.env)) {
      const pkgs = launch.packages.join(", ") || "its package";
      slot.install = { what: `${launch.launcher} installing ${pkgs}`, allowanceMs: allowance };
    }
    slots.set(server.name, slot);
  }
  let closed = false;
  const projectRoot = opts.projectRoot ?? process.cwd();
  const helperCwd = helperWorkingDir(opts.scootHome, projectRoot);
  let nodeFetch: NodeFetch | undefined;
  let ca: Result<string | undefined> | undefined;
  const label = (name: string) => `MCP server ${JSON.stringify(name)}`;
  /** `after 30 s (tools.timeout_ms = 30000)`: the duration and the setting to raise. */
  const deadline = `after ${formatDuration(opts.timeoutMs)} (${opts.timeoutSetting ?? `${MCP_DEADLINE_SETTING} = ${opts.timeoutMs}`})`;
  let fallbackWarned = false;

  /** How long a server's connection may take: the deadline, plus a launcher's first-start allowance. */
  const startMs = (slot: Slot) => opts.timeoutMs + (slot.install?.allowanceMs ?? 0);
  /** `after 30 s (…) plus 2 min for npx installing pkg on a first start`. */
  const startDeadline = (slot: Slot) =>
    slot.install
      ? `${deadline} plus ${formatDuration(slot.install.allowanceMs)} for ${slot.install.what} on a first start`
      : deadline;

  /** The caller aborts on its tool deadline with a TimeoutError, or on interruption. */
  function abortedText(what: string, signal: AbortSignal | undefined): string {
    const reason = signal?.reason as { name?: string } | undefined;
    return reason?.name === "TimeoutError" ? `${what} timed out ${deadline}` : `${what} was aborted`;
  }

  function loadCa(): Result<string | undefined> {
    if (ca) return ca;
    if (opts.caFile === undefined) ca = { ok: true, value: undefined };
    else {
      try {
        ca = { ok: true, value: fs.readFileSync(opts.caFile, "utf8") };
      } catch (err) {
        ca = {
          ok: false,
          error: `cannot read backend.ca_file ${opts.caFile}: ${errorText(err)}; not connecting`,
        };
      }
    }
    return ca;
  }

  /** The last lines of the server's stderr, redacted, on one line (` | ` between lines). */
  function stderrQuote(slot: Slot): string {
    const lines = redact(slot.stderrTail)
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== "");
    if (lines.length === 0) return "";
    const tail = lines.slice(-STDERR_QUOTE_LINES).join(" | ");
    const quoted = tail.length > STDERR_QUOTE_CHARS ? `…${tail.slice(-STDERR_QUOTE_CHARS)}` : tail;
    return `; its stderr ends with: ${quoted}`;
  }

  function lostReason(slot: Slot): string {
    return `${label(slot.server.name)} closed its connection (it exited or hung up)${stderrQuote(slot)}`;
  }

  function markDead(slot: Slot, reason: string): void {
    if (slot.dead === undefined) slot.dead = reason;
  }

  /** Idempotent: closes the client (or the bare transport), then waits for the child to go. */
  function shutdown(slot: Slot): Promise<void> {
    slot.shutdown ??= (async () => {
      // Only an unfinished initialize is aborted: aborting a finished one would make the
      // SDK send the server a stray cancellation.
      if (!slot.connected) slot.abort.abort();
      const { client, built } = slot;
      if (client && built) await settle(built.endSession(), END_SESSION_MS);
      const pid = built?.pid();
      const closing = client
        ? settle(client.close(), CLOSE_WAIT_MS)
        : built
          ? settle(built.transport.close(), CLOSE_WAIT_MS)
          : Promise.resolve();
      // Once the SDK's close is done or the child has gone, whatever else is left
      // in the server's own group (an npx-style grandchild) is terminated too.
      if (pid !== undefined && built?.ownGroup) {
        await Promise.race([closing, waitReaped(pid)]);
        await terminateGroup(pid);
      }
      await closing;
      if (pid !== undefined) await waitReaped(pid);
      // No PID namespace: whatever left the group (a setsid helper) is found by its mark.
      if (built?.mark) await reapMarked(built.mark);
    })();
    return slot.shutdown;
  }

  async function connect(slot: Slot, headers: Record<string, string>): Promise<Result<Client>> {
    const { server } = slot;
    const attempt = (async () => {
      const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
      const built = await buildTransport(server, {
        env: opts.env,
        headers,
        projectRoot,
        cwd: helperCwd,
        fetch: () => {
          nodeFetch ??= createNodeFetch(ca?.ok && ca.value !== undefined ? { ca: ca.value } : {});
          return nodeFetch.fetch;
        },
        bwrapPath: opts.bwrapPath,
      });
      slot.built = built;
      if (built.fallbackReason && !fallbackWarned) {
        fallbackWarned = true;
        opts.onWarning?.(
          `MCP stdio servers run without a PID namespace of their own: ${built.fallbackReason}. Their processes are ended at close through their process group and an environment mark; one that leaves its group and clears its environment can outlive the run (docs/mcp.md "Server processes")`,
        );
      }
      built.stderr?.on("data", (chunk: Buffer | string) => {
        const text = chunk.toString();
        slot.stderrTail = (slot.stderrTail + text).slice(-STDERR_TAIL_BYTES);
        opts.stderrSink?.(server.name, text);
      });
      const client = new Client(CLIENT_INFO, {
        capabilities: {},
        // The catalog re-lists itself, within the deadline; told at once (no debounce) so the
        // re-list is under way before the answer of the call that changed the list arrives.
        listChanged: {
          tools: {
            autoRefresh: false,
            debounceMs: 0,
            onChanged: () => opts.onToolsStale?.(server.name, "list_changed"),
          },
        },
      });
      // Transport hiccups (a dropped event stream the SDK retries, say) are not fatal by
      // themselves; a call that depends on them fails with its own error.
      client.onerror = () => {};
      // While connecting, the attempt's own error is the better reason (the SDK closes the
      // client itself when initialize fails); afterwards a close means the server is gone.
      client.onclose = () => {
        slot.lost = true;
        if (slot.connected) markDead(slot, lostReason(slot));
      };
      slot.client = client;
      // The pool closed, or this attempt already timed out, while the SDK was loading.
      if (closed || slot.abort.signal.aborted) throw new Error("connection attempt abandoned");
      await client.connect(built.transport, { timeout: startMs(slot), signal: slot.abort.signal });
      return client;
    })();
    const outcome = await settle(attempt, startMs(slot), slot.abort.signal);
    if (outcome.kind === "ok" && !closed && !slot.lost) {
      slot.connected = true;
      // Compared on connect: the list the run started from may be a cached one.
      opts.onToolsStale?.(server.name, "connected");
      return { ok: true, value: outcome.value };
    }
    let reason: string;
    if (outcome.kind === "ok" && !closed) {
      reason = lostReason(slot);
    } else if (outcome.kind === "ok" || outcome.kind === "aborted" || closed) {
      reason = `${label(server.name)}: connection abandoned because the run is ending`;
    } else if (outcome.kind === "timeout" || errorCode(outcome.error) === REQUEST_TIMEOUT) {
      reason = `${label(server.name)} did not complete its connection: timed out ${startDeadline(slot)}${stderrQuote(slot)}`;
    } else {
      reason = `${label(server.name)} failed to connect: ${errorText(outcome.error)}${stderrQuote(slot)}`;
    }
    // Set before shutdown so the close callback does not replace the real reason.
    markDead(slot, reason);
    void shutdown(slot);
    return { ok: false, error: slot.dead ?? reason };
  }

  /** The slot's connected client, connecting on first use within the tool deadline. */
  async function clientFor(slot: Slot, signal?: AbortSignal): Promise<Result<Client>> {
    const { server } = slot;
    const serverName = server.name;
    if (closed) return { ok: false, error: "the MCP pool is closed: the run has ended" };
    if (slot.dead !== undefined) {
      return { ok: false, error: `${slot.dead}; it is not restarted within a run` };
    }
    if (signal?.aborted) return { ok: false, error: abortedText(`the call to ${label(serverName)}`, signal) };
    if (!slot.connecting) {
      let headers: Record<string, string> = {};
      if (server.transport === "stdio") {
        const own = resolveEnv(server, opts.env);
        if (!own.ok) return own;
      } else {
        const resolved = resolveHeaders(server, opts.env);
        if (!resolved.ok) return resolved;
        headers = resolved.value;
        if (server.url?.startsWith("https:")) {
          const c = loadCa();
          if (!c.ok) return { ok: false, error: `${label(serverName)}: ${c.error}` };
        }
      }
      slot.connecting = connect(slot, headers);
    }
    const conn = await settle(slot.connecting, startMs(slot), signal);
    if (conn.kind === "aborted") {
      // The caller's deadline is not the server's: a launcher still installing goes on, and a
      // later call waits for the same start.
      const starting = slot.install && !slot.connected && slot.dead === undefined && !closed;
      const still = starting
        ? `; the server is still starting (${slot.install!.what}, which may take up to ${formatDuration(startMs(slot))} on a first start) and a later call will use it`
        : "";
      return {
        ok: false,
        error: `${abortedText(`the call to ${label(serverName)}`, signal)}${still}${stderrQuote(slot)}`,
      };
    }
    if (conn.kind === "timeout") {
      return {
        ok: false,
        error: `${label(serverName)} did not complete its connection: timed out ${startDeadline(slot)}${stderrQuote(slot)}`,
      };
    }
    if (conn.kind === "error") return { ok: false, error: `${label(serverName)}: ${errorText(conn.error)}` };
    if (!conn.value.ok) return conn.value;
    return { ok: true, value: conn.value.value };
  }

  /** `tools/list` of one server, within the tool deadline (docs/mcp.md "MCP servers": tool descriptions). */
  async function listTools(serverName: string, signal?: AbortSignal): Promise<Result<unknown[]>> {
    const slot = slots.get(serverName);
    if (!slot) return { ok: false, error: `unknown MCP server ${JSON.stringify(serverName)}` };
    const started = Date.now();
    const connected = await clientFor(slot, signal);
    if (!connected.ok) return connected;
    const remaining = Math.max(1, startMs(slot) - (Date.now() - started));
    const listed = await settle(
      connected.value.listTools(undefined, { timeout: remaining }),
      remaining,
      signal,
    );
    if (listed.kind === "ok") return { ok: true, value: listed.value.tools };
    if (listed.kind === "error")
      return { ok: false, error: `${label(serverName)}: ${errorText(listed.error)}` };
    return { ok: false, error: `${label(serverName)} did not list its tools: timed out ${deadline}` };
  }

  async function call(
    serverName: string,
    tool: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<Result<string>> {
    const slot = slots.get(serverName);
    if (!slot) {
      const known = [...slots.keys()];
      const list = known.length === 0 ? "no MCP servers are configured" : `configured: ${known.join(", ")}`;
      return { ok: false, error: `unknown MCP server ${JSON.stringify(serverName)} (${list})` };
    }
    const { server } = slot;
    if (!server.allowed_tools.includes(tool)) {
      const allowed =
        server.allowed_tools.length === 0
          ? "its allowed_tools is empty, so every tool is denied"
          : `allowed: ${server.allowed_tools.join(", ")}`;
      return {
        ok: false,
        error: `tool ${JSON.stringify(tool)} is not in allowed_tools of ${label(serverName)} (${allowed})`,
      };
    }
    if (!isPlainObject(args)) return { ok: false, error: "MCP tool arguments must be a JSON object" };
    const started = Date.now();
    const connected = await clientFor(slot, signal);
    if (!connected.ok) return connected;
    const client = connected.value;
    // The newest list (a re-list after connecting or list_changed may be under way) has the
    // last word on the arguments: a tool that changed is checked against its new schema.
    if (opts.checkCall) {
      const waited = Math.max(1, startMs(slot) - (Date.now() - started));
      const checked = await settle(opts.checkCall(serverName, tool, args), waited, signal);
      const what = `${label(serverName)} tool ${JSON.stringify(tool)}`;
      if (checked.kind === "aborted") return { ok: false, error: abortedText(`the call to ${what}`, signal) };
      if (checked.kind === "timeout")
        return { ok: false, error: `${what} timed out ${deadline}: its tools were being listed again` };
      if (checked.kind === "ok" && checked.value !== undefined)
        return { ok: false, error: `${what}: ${checked.value}; not sent` };
    }

    const remaining = Math.max(1, startMs(slot) - (Date.now() - started));
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const what = `${label(serverName)} tool ${JSON.stringify(tool)}`;
    let answered = false;
    try {
      const pending = client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: remaining,
        signal: stop.signal,
      });
      const outcome = await settle(
        pending.finally(() => {
          answered = true;
        }),
        remaining,
        signal,
      );
      if (outcome.kind === "ok") return renderToolResult(outcome.value);
      if (outcome.kind === "aborted") return { ok: false, error: abortedText(`the call to ${what}`, signal) };
      if (outcome.kind === "timeout" || errorCode(outcome.error) === REQUEST_TIMEOUT) {
        return { ok: false, error: `${what} timed out ${deadline}: no answer` };
      }
      if (errorCode(outcome.error) === CONNECTION_CLOSED || slot.dead !== undefined) {
        markDead(slot, lostReason(slot));
        return { ok: false, error: `${what} failed: ${slot.dead}` };
      }
      return { ok: false, error: `${what} failed: ${errorText(outcome.error)}` };
    } finally {
      signal?.removeEventListener("abort", onAbort);
      // When we gave up first, stop the SDK's wait too (it tells the server to cancel).
      if (!answered) stop.abort();
    }
  }

  /** Connects and lists the tools once, for doctor: a server that starts but cannot list is a failure. */
  async function probe(serverName: string): Promise<Result<{ tools: string[] }>> {
    const listed = await listTools(serverName);
    if (!listed.ok) return listed;
    const names = listed.value
      .map((t) => (isPlainObject(t) && typeof t.name === "string" ? t.name : undefined))
      .filter((n): n is string => n !== undefined);
    return { ok: true, value: { tools: names } };
  }

  async function close(): Promise<void> {
    closed = true;
    await Promise.allSettled(
      [...slots.values()].filter((s) => s.connecting !== undefined || s.built !== undefined).map(shutdown),
    );
    nodeFetch?.close();
  }

  return { call, listTools, probe, close };
}
