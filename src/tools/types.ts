/**
 * The shape every built-in tool has. The registry (`registry.ts`) lists them; the step
 * schema, the system prompt, the `parallel` allowlist and the policy gate all read it.
 */
import type { Config, PolicyMode } from "../config/schema.js";
import type { SandboxService } from "../sandbox/launch.js";

export type Capability = "read" | "write" | "net_read" | "net_write" | "exec" | "native";

export type Result<T, E = string> = { ok: true; value: T } | { ok: false; error: E };

/** What the gate needs to know about one call, computed from its validated input. */
export interface Effects {
  capability: Capability;
  /** Paths the call reads (file_read, grep, outline paths, glob root). */
  readPaths?: string[];
  /** Paths the call writes. */
  writePaths?: string[];
  /** Shell command text (bash). */
  command?: string;
  /** Network target (http_request). */
  url?: { method: string; url: string };
  /** MCP target (mcp_call). */
  mcp?: { server: string; tool: string };
}

export type Decision = { allow: true } | { allow: false; reason: string };

/** The gate bound to the run's mode and settings; tools that fan out or follow redirects call it again. */
export type BoundGate = (action: string, rawInput: string) => Decision;

export interface ToolContext {
  /** Project root: the process working directory. */
  cwd: string;
  config: Config;
  mode: PolicyMode;
  /** Aborted on the tool deadline or on SIGINT. */
  signal: AbortSignal;
  /** Effective tool deadline in ms (already resolved from tools.timeout_ms). */
  timeoutMs: number;
  /** Re-check a derived call (parallel children, redirect hops) through the same gate. */
  gate: BoundGate;
  /** Environment for child processes, token variable already removed. */
  childEnv: NodeJS.ProcessEnv;
  /** Current session transcript path (recall reads it and its `.1`). */
  sessionPath?: string;
  /** Extra services that later capabilities attach (skills, MCP pool). */
  services: ToolServices;
}

export interface ToolServices {
  skills?: unknown;
  mcp?: unknown;
  /** How bash is contained (issue 11); tests without it get defaults from the context. */
  sandbox?: SandboxService;
  /** Runs a tool by name through gate + registry; used by `parallel`. */
  runChild?: (action: string, rawInput: string) => Promise<string>;
}

export interface Tool<I = unknown> {
  name: string;
  /** One or two sentences for the system prompt. */
  describe: string;
  /** The action_input shape as shown in the prompt, e.g. `{"path": "..."}` or `command string`. */
  inputShape: string;
  /** Observation clip size in bytes (head + tail kept). */
  clipBytes: number;
  /** Validate the raw action_input text. Error text says exactly what is wrong. */
  parse(raw: string): Result<I>;
  /** What the call would touch; the gate decides from this alone. */
  effects(input: I): Effects;
  run(input: I, ctx: ToolContext): Promise<string>;
}

/** Tool objects are stored heterogeneously; this alias keeps call sites readable. */
// biome-ignore lint/suspicious/noExplicitAny: the registry holds tools of differing input types
export type AnyTool = Tool<any>;
