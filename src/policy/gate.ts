/**
 * The execution-policy gate (docs/safety.md "Safety model"): one decision function for every call, reached
 * only through the call pipeline (`agent/calls.ts`): the agent loop, `parallel` children,
 * redirect hops and `scoot policy check`.
 *
 * It decides from the call's declared effects only, never from its action name. It reads
 * like a table, in this order:
 * 1. capability: `native` (skill, recall) is always allowed; in readonly `write`, `net_read`,
 *    `net_write` and `exec` are denied outright.
 * 2. read paths (every mode, see paths.ts), then write paths.
 * 3. shell text (bash) → shell.ts; URL (http_request) → urls.ts; MCP target → allowlist.
 * A call that claims a capability but omits what the gate needs to judge it (a write with
 * no path, a network call with no URL) is refused unless the mode is unrestricted; an exec
 * with neither command nor MCP target is refused in every mode: fail closed.
 *
 * `decide` does no I/O of its own; `buildGateSettings` (settings.ts) is where the configuration
 * and the filesystem resolver come in. An allowed verdict carries the resolved paths it judged (the
 * target); the tool opens those and nothing else.
 */
import type { Capability, Decision, Effects, Verdict } from "../core/types.js";
import { judgeReadPath, judgeWritePath } from "./paths.js";
import { checkShell } from "./shell.js";
import type { GateSettings } from "./types.js";
import { checkUrl } from "./urls.js";

/** Names quoted in reasons (model-chosen server/tool names) are clipped to this length. */
const MAX_REASON_NAME = 60;

export const CAPABILITIES: ReadonlySet<Capability> = new Set([
  "read",
  "write",
  "net_read",
  "net_write",
  "exec",
  "native",
]);

const ALLOW: Decision = { allow: true };

/** The way out of a readonly denial when the operator chose readonly. */
const READONLY_FIX = "run with --policy guarded";

function deny(reason: string): { allow: false; reason: string } {
  return { allow: false, reason };
}

function clipName(s: string): string {
  const oneLine = s.replace(/[\u0000-\u001f\u007f]/g, "?");
  return oneLine.length > MAX_REASON_NAME ? `${oneLine.slice(0, MAX_REASON_NAME)}...` : oneLine;
}

/** Decides one call from its declared effects; when allowed, with the resolved target. */
export function decide(effects: Effects, settings: GateSettings): Verdict {
  const cap = effects.capability;
  const mode = settings.mode;
  const strict = mode !== "unrestricted";
  const isShell = effects.command !== undefined;
  const isMcp = effects.mcp !== undefined;
  const isNet = effects.url !== undefined || cap === "net_read" || cap === "net_write";

  if (!CAPABILITIES.has(cap)) return deny(`policy: unknown capability ${clipName(String(cap))}`);
  if (cap === "native") return { allow: true, target: { read: [], write: [] } };
  // Nothing to judge is never allowed, whatever the mode (the gate knows no action names).
  if (cap === "exec" && !isShell && !isMcp) {
    return deny("policy: exec call names neither a command nor an MCP target");
  }

  if (mode === "readonly") {
    const fix = settings.readonlyFix ?? READONLY_FIX;
    if (cap === "write") return deny(`readonly mode denies writes; ${fix}`);
    if (isNet) {
      return deny("readonly mode denies network access (GET and HEAD included); run with --policy guarded");
    }
    if (isMcp) return deny("readonly mode denies MCP calls; run with --policy guarded");
    if (cap === "exec" || isShell) return deny(`readonly mode denies shell commands; ${fix}`);
  }

  const read: string[] = [];
  for (const p of effects.readPaths ?? []) {
    const d = judgeReadPath(p, settings);
    if (!d.allow) return d;
    read.push(d.target);
  }
  const writes = effects.writePaths ?? [];
  if (cap === "write" && writes.length === 0 && strict) return deny("write: the call names no path to check");
  const write: string[] = [];
  for (const p of writes) {
    const d = judgeWritePath(p, settings);
    if (!d.allow) return d;
    write.push(d.target);
  }

  if (isShell) {
    const d = checkShell(effects.command ?? "", mode);
    if (!d.allow) return d;
  }
  if (isNet) {
    if (effects.url === undefined) {
      if (strict) return deny("http: the call names no URL to check");
    } else {
      const d = checkUrl(effects.url.url, settings);
      if (!d.allow) return d;
    }
  }
  if (isMcp) {
    const d = checkMcp(effects.mcp, settings);
    if (!d.allow) return d;
  }

  return { allow: true, target: { read, write } };
}

/** MCP fails closed: readonly, unknown server, empty allowlist, unlisted tool. */
export function checkMcp(target: Effects["mcp"], settings: GateSettings): Decision {
  if (settings.mode === "readonly")
    return deny(`readonly mode denies MCP calls; ${settings.readonlyFix ?? READONLY_FIX}`);
  if (!target) return deny("mcp: the call names no server and tool");
  const { server, tool } = target;
  const allowed = Object.hasOwn(settings.mcpAllowed, server) ? settings.mcpAllowed[server] : undefined;
  if (!allowed) return deny(`mcp: unknown server ${clipName(server)}; configure it under [[mcp.servers]]`);
  if (allowed.length === 0) {
    return deny(`mcp: server ${clipName(server)} allows no tools (its allowed_tools is empty)`);
  }
  if (!allowed.includes(tool)) {
    return deny(`mcp: tool ${clipName(tool)} is not in allowed_tools of server ${clipName(server)}`);
  }
  return ALLOW;
}
