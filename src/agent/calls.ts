/**
 * The one call pipeline (issue 10, README "One call pipeline"): every tool call, whoever
 * starts it, goes
 *
 *   prepare: find the tool → validate the input once → declared effects → gate
 *            → invalid | denied | ready {tool, input, target}
 *   run:     audit `tool_call` → the tool under its deadline, opening only `target` → clip
 *
 * Top-level steps, `parallel` children (`ctx.call`), `http_request` redirect hops
 * (`ctx.gate`) and `scoot policy check` (prepare only) all come through here, so the gate
 * cannot judge one file while a tool opens another.
 */

import { clip } from "../core/clip.js";
import { decide } from "../policy/gate.js";
import type { GateSettings } from "../policy/types.js";
import { TOOLS_BY_NAME } from "../tools/registry.js";
import type { AnyTool, Decision, Effects, Result, Target, ToolContext } from "../tools/types.js";
import { runToolWithDeadline } from "./execute.js";
import { changedFile, snapshotForDiff } from "./file-snapshot.js";

/** How much of a tool input or observation goes into one audit line. */
export const AUDIT_MSG_MAX = 4096;

/** What the pipeline needs to judge a call: the gate's settings and the run's enabled tools. */
export interface CallEnv {
  settings: GateSettings;
  tools: ReadonlyMap<string, AnyTool>;
}

export type Prepared =
  | { kind: "invalid"; action: string; raw: string; error: string }
  | { kind: "denied"; action: string; raw: string; reason: string }
  | Ready;

export interface Ready {
  kind: "ready";
  action: string;
  raw: string;
  tool: AnyTool;
  input: unknown;
  /** The resolved paths the gate allowed; the tool opens these. */
  target: Target;
  /** Judged children of a fan-out call (`parallel`), in call order. */
  children?: readonly Prepared[];
}

/**
 * Validates and judges one call. `parsed` is the already-validated input when the caller
 * has it (a step is validated while it is parsed), so the input is parsed once.
 */
export function prepareCall(
  action: string,
  raw: string,
  env: CallEnv,
  parsed?: { input: unknown },
): Prepared {
  const tool = env.tools.get(action);
  if (!tool) return { kind: "invalid", action, raw, error: `unknown action "${action}"` };
  let input: unknown;
  if (parsed) input = parsed.input;
  else {
    const r = tool.parse(raw);
    if (!r.ok) return { kind: "invalid", action, raw, error: `invalid input for ${action}: ${r.error}` };
    input = r.value;
  }
  let children: Prepared[] | undefined;
  if (tool.children) {
    const prepared = prepareChildren(tool, input, env);
    if (!prepared.ok) return { kind: "invalid", action, raw, error: prepared.error };
    children = prepared.value;
  }
  const verdict = decide(tool.effects(input), env.settings);
  if (!verdict.allow) return { kind: "denied", action, raw, reason: verdict.reason };
  return {
    kind: "ready",
    action,
    raw,
    tool,
    input,
    target: verdict.target,
    ...(children ? { children } : {}),
  };
}

/**
 * Every child validated (all of them, before any runs) and judged. An invalid child fails
 * the whole call; a denied child stays in the list as denied.
 */
function prepareChildren(tool: AnyTool, input: unknown, env: CallEnv): Result<Prepared[]> {
  const out: Prepared[] = [];
  const calls = tool.children?.(input) ?? [];
  for (let i = 0; i < calls.length; i++) {
    const { action, input: raw } = calls[i]!;
    const where = `${tool.name}: calls[${i}]`;
    const child = env.tools.get(action);
    if (!child?.parallelChild) {
      const allowed = [...env.tools.values()].filter((t) => t.parallelChild).map((t) => t.name);
      return {
        ok: false,
        error: `${where}: "${action}" is not allowed in ${tool.name}; only ${allowed.join(", ")} (http_request with GET or HEAD)`,
      };
    }
    const parsed = child.parse(raw);
    if (!parsed.ok) return { ok: false, error: `${where}: ${parsed.error}` };
    const refused = child.parallelChild(parsed.value);
    if (refused) return { ok: false, error: `${where}: ${refused}` };
    out.push(prepareCall(action, raw, env, { input: parsed.value }));
  }
  return { ok: true, value: out };
}

/**
 * What a recorded call declared it would touch (the compactor's view of an old step), or
 * undefined when the step no longer validates. Never a decision: nothing is judged here.
 */
export function declaredEffects(
  action: string,
  raw: string,
  tools: ReadonlyMap<string, AnyTool> = TOOLS_BY_NAME,
): Effects | undefined {
  const tool = tools.get(action);
  const parsed = tool?.parse(raw);
  return tool && parsed?.ok ? tool.effects(parsed.value) : undefined;
}

/** The dry-run answer (`scoot policy check`): a denied child denies the whole call, by name. */
export function dryRunDecision(p: Prepared): Decision {
  if (p.kind === "invalid") return { allow: false, reason: p.error };
  if (p.kind === "denied") return { allow: false, reason: p.reason };
  const children = p.children ?? [];
  for (let i = 0; i < children.length; i++) {
    const c = children[i]!;
    if (c.kind !== "ready") {
      const why = c.kind === "denied" ? c.reason : c.error;
      return { allow: false, reason: `${p.action} child calls[${i}] (${c.action}) is denied: ${why}` };
    }
  }
  return { allow: true };
}

/** Where the pipeline reports: the run's audit (bound to its session and run) and counters. */
export interface CallSink {
  /** Appends one audit record; an error means it is not on disk. */
  audit(kind: "tool_call" | "policy_deny", msg: string): Result<void>;
  denied?(action: string, raw: string, reason: string): void;
  running?(action: string, raw: string): void;
  /** A file tool changed `path` (README "The live view": its diff). */
  fileChanged?(path: string, before: string | null, after: string | null): void;
}

export interface PipelineDeps {
  env: CallEnv;
  sink: CallSink;
  /** The tool context without the per-call fields the pipeline fills in. */
  base: Omit<ToolContext, "signal" | "timeoutMs" | "gate" | "call">;
  timeoutMs: number;
}

export interface CallPipeline {
  prepare(action: string, raw: string, parsed?: { input: unknown }): Prepared;
  /** Records a denial (audit, event); returns the observation the model sees. */
  deny(p: Prepared & { kind: "denied" | "invalid" }): string;
  /** Audits and runs an allowed call under the deadline: the raw result and it clipped to the tool's size. */
  run(ready: Ready, signal: AbortSignal): Promise<{ text: string; raw: string }>;
  /** First audit failure of a derived call (a child or a hop), which stops the run. */
  auditFailure(): string | undefined;
}

function clipAudit(text: string): string {
  return clip(text, AUDIT_MSG_MAX);
}

export function createCallPipeline(deps: PipelineDeps): CallPipeline {
  let derivedFailure: string | undefined;

  const recordDenial = (action: string, raw: string, reason: string): Result<void> => {
    deps.sink.denied?.(action, raw, reason);
    return deps.sink.audit("policy_deny", clipAudit(`${action} ${raw} -- ${reason}`));
  };

  /** A derived call's gate check (redirect hops): judged and, when denied, audited. */
  const gate = (action: string, raw: string): Decision => {
    const p = prepareCall(action, raw, deps.env);
    if (p.kind === "ready") return { allow: true };
    const reason = p.kind === "denied" ? p.reason : p.error;
    const r = recordDenial(action, raw, reason);
    // A tool may swallow exceptions: remember the failure and stop once the tool returns.
    if (!r.ok) derivedFailure ??= r.error;
    return { allow: false, reason };
  };

  const run = async (ready: Ready, signal: AbortSignal): Promise<{ text: string; raw: string }> => {
    const logged = deps.sink.audit("tool_call", clipAudit(`${ready.action} ${ready.raw}`));
    if (!logged.ok) {
      derivedFailure ??= logged.error;
      throw new AuditWriteError(logged.error);
    }
    deps.sink.running?.(ready.action, ready.raw);
    const watched = deps.sink.fileChanged ? changedFile(ready) : undefined;
    const before = watched === undefined ? undefined : snapshotForDiff(watched);
    const derived = (own: AbortSignal) => ({
      gate,
      call: (action: string, raw: string) => call(action, raw, own),
    });
    const raw = await runToolWithDeadline(
      ready.tool,
      ready.input,
      ready.target,
      deps.base,
      derived,
      deps.timeoutMs,
      signal,
    );
    if (watched !== undefined && before !== undefined) {
      const after = snapshotForDiff(watched);
      if (after !== undefined && after !== before) deps.sink.fileChanged?.(watched, before, after);
    }
    return { text: clip(raw, ready.tool.clipBytes), raw };
  };

  /** A derived call (a `parallel` child): the whole pipeline, inside its parent's signal. */
  const call = async (action: string, raw: string, signal: AbortSignal): Promise<string> => {
    const p = prepareCall(action, raw, deps.env);
    if (p.kind === "invalid") return `${action}: ${p.error}`;
    if (p.kind === "denied") {
      const r = recordDenial(action, raw, p.reason);
      if (!r.ok) derivedFailure ??= r.error;
      return `denied: ${p.reason}`;
    }
    try {
      return (await run(p, signal)).text;
    } catch (e) {
      if (e instanceof AuditWriteError) return `${action}: not run: the audit log cannot be written`;
      throw e;
    }
  };

  return {
    prepare: (action, raw, parsed) => prepareCall(action, raw, deps.env, parsed),
    deny(p) {
      const reason = p.kind === "denied" ? p.reason : p.error;
      const r = recordDenial(p.action, p.raw, reason);
      if (!r.ok) throw new AuditWriteError(r.error);
      return reason;
    },
    run,
    auditFailure: () => derivedFailure,
  };
}

/** The audit record of a call could not be written: the call did not run. */
export class AuditWriteError extends Error {}
