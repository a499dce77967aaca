/**
 * Builds the SDK transport for one configured server. Every SDK module is imported here
 * with a dynamic `import()`, and only the one transport a server uses, so a run that
 * never calls MCP never loads the SDK (startup stays fast).
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { resolveEnv } from "../config/mcp-servers.js";
import type { McpServerConfig } from "../config/schema.js";
import { hostHelperEnv } from "../core/host-helper-env.js";
import type { FetchLike } from "./fetch.js";
import { serverLaunch } from "./server-launch.js";

/**
 * What a stdio server inherits from Scoot's environment: the SDK's own safe list plus
 * locale and temp settings. Nothing else crosses over (the backend token included); a
 * server that needs more gets it through its configured `env`.
 */
export const STDIO_INHERITED_ENV = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TERM",
  "USER",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TMPDIR",
  "TZ",
];

export interface BuiltTransport {
  transport: Transport;
  /** Present for stdio: the child's stderr, piped so it never lands on Scoot's terminal. */
  stderr?: NodeJS.ReadableStream;
  /** The child pid once started (stdio only). */
  pid(): number | undefined;
  /** stdio: the child leads its own process group (pgid = pid), reaped whole at close. */
  ownGroup?: boolean;
  /** stdio, no PID namespace: the mark its processes carry, reaped at close (mark-reap.ts). */
  mark?: string;
  /** stdio: why the server is not in a PID namespace of its own, when it is not. */
  fallbackReason?: string;
  /** Streamable HTTP: ends the server-side session (DELETE); a no-op elsewhere. */
  endSession(): Promise<void>;
}

/**
 * The server runs on the host, unsandboxed: its search paths lose every relative, empty and
 * project entry (configured ones too) and Python and Node get no module path from the
 * project (`hostHelperEnv`).
 */
export function stdioEnv(
  server: Pick<McpServerConfig, "name" | "env">,
  env: NodeJS.ProcessEnv,
  projectRoot: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of STDIO_INHERITED_ENV) {
    const v = env[name];
    // Exported shell functions (`() {...}`) are skipped, as the SDK does.
    if (v !== undefined && !v.startsWith("()")) out[name] = v;
  }
  // Checked by the pool before it connects (a missing value_env fails closed there).
  const own = resolveEnv(server, env);
  if (own.ok) Object.assign(out, own.value);
  return hostHelperEnv(out, projectRoot);
}

export async function buildTransport(
  server: McpServerConfig,
  opts: {
    env: NodeJS.ProcessEnv;
    /** The project the model writes: kept out of a stdio server's paths. */
    projectRoot: string;
    /** Where a stdio server starts (a place the model cannot write: see `helperWorkingDir`). */
    cwd: string;
    headers: Record<string, string>;
    fetch: () => FetchLike;
    /** tools.sandbox_bwrap_path: the bubblewrap that gives a stdio server its own PID namespace. */
    bwrapPath?: string | undefined;
  },
): Promise<BuiltTransport> {
  if (server.transport === "stdio") {
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const env = stdioEnv(server, opts.env, opts.projectRoot);
    const launch = await serverLaunch(server.command!, server.args, {
      pathVar: env.PATH,
      cwd: opts.cwd,
      projectRoot: opts.projectRoot,
      bwrapPath: opts.bwrapPath,
    });
    const transport = new StdioClientTransport({
      command: launch.command,
      args: launch.args,
      env: { ...env, ...launch.env },
      stderr: "pipe",
      cwd: opts.cwd,
    });
    // The SDK forgets the child as soon as any close begins (its own included, after a
    // failed initialize); the pid is kept here so the pool can still wait for the reaping.
    let pid: number | undefined;
    const start = transport.start.bind(transport);
    transport.start = async () => {
      try {
        await start();
      } finally {
        pid = transport.pid ?? undefined;
      }
    };
    return {
      transport,
      stderr: (transport.stderr as NodeJS.ReadableStream | null) ?? undefined,
      pid: () => pid,
      ownGroup: launch.ownGroup,
      ...(launch.mark ? { mark: launch.mark } : {}),
      ...(launch.fallbackReason ? { fallbackReason: launch.fallbackReason } : {}),
      endSession: async () => {},
    };
  }
  const url = new URL(server.url!);
  const requestInit: RequestInit = { headers: opts.headers };
  if (server.transport === "sse") {
    const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
    const transport = new SSEClientTransport(url, { requestInit, fetch: opts.fetch() });
    return { transport, pid: () => undefined, endSession: async () => {} };
  }
  const { StreamableHTTPClientTransport } = await import(
    "@modelcontextprotocol/sdk/client/streamableHttp.js"
  );
  const transport = new StreamableHTTPClientTransport(url, { requestInit, fetch: opts.fetch() });
  return {
    transport,
    pid: () => undefined,
    endSession: () => transport.terminateSession(),
  };
}
