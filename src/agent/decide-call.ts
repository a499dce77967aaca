/**
 * One call through the gate: find the tool, validate its input, compute its effects, and
 * ask the pure decision function. The agent loop, `parallel` children, redirect hops and
 * `scoot policy check` all come through here, so they can never disagree.
 */
import { decide } from "../policy/gate.js";
import type { GateSettings } from "../policy/types.js";
import { TOOLS_BY_NAME } from "../tools/registry.js";
import type { AnyTool, Decision } from "../tools/types.js";

export function decideCall(
  action: string,
  rawInput: string,
  settings: GateSettings,
  tools: ReadonlyMap<string, AnyTool> = TOOLS_BY_NAME,
): Decision {
  const tool = tools.get(action);
  if (!tool) return { allow: false, reason: `unknown action "${action}"` };
  const parsed = tool.parse(rawInput);
  if (!parsed.ok) return { allow: false, reason: `invalid input for ${action}: ${parsed.error}` };
  return decide(action, tool.effects(parsed.value), settings);
}
