/**
 * Preparing a call (docs/safety.md "One call pipeline"): find the tool, validate the input once,
 * read its declared effects, ask the gate. The result is the call's first record — invalid,
 * denied or ready with the target the gate resolved — and nothing has run. Top-level steps,
 * `parallel` children, redirect hops and `scoot policy check` all start here.
 */
import type { Decision, Effects, Result, Verdict } from "../core/types.js";
import { decide } from "../policy/gate.js";
import type { GateSettings } from "../policy/types.js";
import { TOOLS_BY_NAME } from "../tools/registry.js";
import type { AnyTool } from "../tools/types.js";
import { type Prepared, rawPresentation } from "./call-record.js";

/** What the pipeline needs to judge a call: the gate's settings and the run's enabled tools. */
export interface CallEnv {
  settings: GateSettings;
  tools: ReadonlyMap<string, AnyTool>;
  /** The gate; tests pass a counting wrapper (test/agent/calls-once.test.ts). */
  judge?: (effects: Effects, settings: GateSettings) => Verdict;
}

/** Call ids: unique in the process, so two sessions' calls never share one. */
let lastCallId = 0;
function nextCallId(): number {
  lastCallId += 1;
  return lastCallId;
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
  const id = nextCallId();
  const invalid = (error: string): Prepared => ({
    kind: "invalid",
    id,
    action,
    raw,
    presentation: rawPresentation(action, raw),
    error,
  });
  const tool = env.tools.get(action);
  if (!tool) return invalid(`unknown action "${action}"`);
  let input: unknown;
  if (parsed) input = parsed.input;
  else {
    const r = tool.parse(raw);
    if (!r.ok) return invalid(`invalid input for ${action}: ${r.error}`);
    input = r.value;
  }
  let children: Prepared[] | undefined;
  if (tool.children) {
    const prepared = prepareChildren(tool, input, env);
    if (!prepared.ok) return invalid(prepared.error);
    children = prepared.value;
  }
  const effects = tool.effects(input);
  const valid = { id, action, raw, tool, input, effects, presentation: tool.present(input) };
  const verdict = (env.judge ?? decide)(effects, env.settings);
  if (!verdict.allow) return { kind: "denied", ...valid, reason: verdict.reason };
  const where = { target: verdict.target, root: () => realRoot(env.settings) ?? env.settings.projectRoot };
  // What "always" and a rule cover: the tool's own scope of what the gate resolved, else the tool.
  const scope = tool.approvalScope?.of(input, where);
  const knownSafe = tool.knownSafe?.(input, where) === true;
  return {
    kind: "ready",
    ...valid,
    target: verdict.target,
    ...(scope !== undefined ? { scope } : {}),
    ...(knownSafe ? { knownSafe } : {}),
    rememberKey: scope !== undefined ? `${tool.name}:${scope}` : tool.name,
    ...(children ? { children } : {}),
  };
}

/** The project root with its symlinks followed, as the gate's targets are. */
export function realRoot(settings: GateSettings): string | undefined {
  return settings.realpath(settings.projectRoot);
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

/**
 * A recorded step shown again (an editor reloading a session): how its tool presents it, or its
 * raw text when it no longer validates. Never a decision: nothing is judged here.
 */
export function presentRecorded(
  action: string,
  raw: string,
  tools: ReadonlyMap<string, AnyTool> = TOOLS_BY_NAME,
): Pick<Prepared, "raw" | "presentation"> & { effects?: Effects; tool?: AnyTool; input?: unknown } {
  const tool = tools.get(action);
  const parsed = tool?.parse(raw);
  if (!tool || !parsed?.ok) return { raw, presentation: rawPresentation(action, raw) };
  return {
    raw,
    presentation: tool.present(parsed.value),
    effects: tool.effects(parsed.value),
    tool,
    input: parsed.value,
  };
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
