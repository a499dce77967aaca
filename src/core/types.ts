/**
 * The shared vocabulary of a call: what it may do (capability), what it would touch
 * (effects), and what the gate made of it (decision, verdict, target). Tools, the policy
 * gate, the agent loop and the CLI all speak it; this module imports nothing, so none of
 * them depends on another through it.
 */

export type Capability = "read" | "write" | "net_read" | "net_write" | "exec" | "native";

export type Result<T, E = string> = { ok: true; value: T } | { ok: false; error: E };

/** What the gate needs to know about one call, computed from its validated input. */
export interface Effects {
  capability: Capability;
  /** Paths the call reads (file_read, grep, outline paths, glob root), as the model wrote them. */
  readPaths?: string[];
  /** Paths the call writes, as the model wrote them. */
  writePaths?: string[];
  /** Shell command text (bash). */
  command?: string;
  /** Network target (http_request). */
  url?: { method: string; url: string };
  /** MCP target (mcp_call). */
  mcp?: { server: string; tool: string };
}

export type Decision = { allow: true } | { allow: false; reason: string };

/**
 * The files an allowed call may open: each path of its effects resolved once by the gate
 * (lexically against the project root, then every symlink followed), in the same order.
 * A file tool opens exactly these and never resolves the model's string again
 * (docs/safety.md "Policy modes").
 */
export interface Target {
  read: readonly string[];
  write: readonly string[];
}

/** A decision that, when it allows, carries the target it judged. */
export type Verdict = { allow: true; target: Target } | { allow: false; reason: string };

export const NO_TARGET: Target = Object.freeze({ read: [], write: [] });
