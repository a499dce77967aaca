/**
 * A complete `ToolContext` for tool tests: defaults a careful caller would pass, every
 * field overridable. Defaults: the current directory as project root, fresh default
 * configuration, `guarded` mode, an allow-all gate, a never-aborted signal, a 5 s
 * deadline and a copy of this process's environment for children.
 */
import { defaultConfig } from "../../src/config/schema.js";
import type { BoundGate, ToolContext } from "../../src/tools/types.js";

export const ALLOW_ALL: BoundGate = () => ({ allow: true });

export function makeToolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    cwd: process.cwd(),
    config: defaultConfig(),
    mode: "guarded",
    signal: new AbortController().signal,
    timeoutMs: 5000,
    gate: ALLOW_ALL,
    childEnv: { ...process.env },
    services: {},
    ...overrides,
  };
}
