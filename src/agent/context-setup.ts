/**
 * Opens the context fit of an agent session: discovers the window (once per process, cached in
 * the home's state) and says what it found on --trace, once (docs/context.md "Context window").
 */
import { type ContextWindow, describeWindow, discoverContextWindow } from "../backend/context-window.js";
import type { Config } from "../config/schema.js";
import { ContextFit } from "./context-fit.js";
import { stepSchema } from "./step.js";

export interface ContextSetup {
  config: Config;
  token?: string;
  stateDir: string;
  toolNames: readonly string[];
  signal?: AbortSignal;
  /** One line for --trace. */
  say: (message: string) => void;
}

export function stepSchemaBytes(toolNames: readonly string[]): number {
  return Buffer.byteLength(JSON.stringify(stepSchema([...toolNames])));
}

export function budgetLine(fit: ContextFit): string {
  const b = fit.budget();
  const w: ContextWindow = fit.window;
  const from = b.windowDriven ? "set by the window" : "agent.context_budget_bytes";
  return `window ${describeWindow(w)}${w.cached ? " [cached]" : ""}; history budget ${b.bytes} bytes (${from})`;
}

export async function openContextFit(s: ContextSetup): Promise<ContextFit> {
  const window = await discoverContextWindow({
    backend: s.config.backend,
    token: s.token,
    stateDir: s.stateDir,
    signal: s.signal,
  });
  for (const note of window.notes) s.say(`discovery: ${note}; falling back`);
  const fit = new ContextFit(window, s.config, stepSchemaBytes(s.toolNames), s.say);
  s.say(budgetLine(fit));
  return fit;
}
