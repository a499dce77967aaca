/**
 * A complete `ToolContext` for tool tests: defaults a careful caller would pass, every
 * field overridable. Defaults: the current directory as project root, fresh default
 * configuration, `guarded` mode, an allow-all gate, no derived-call runner, a never-aborted
 * signal, a 5 s deadline and a copy of this process's environment for children.
 */
import { defaultConfig } from "../../src/config/schema.js";
import type { Target } from "../../src/core/types.js";
import { judgeReadPath, judgeWritePath } from "../../src/policy/paths.js";
import { resolvePhysical } from "../../src/policy/realpath.js";
import type { GateSettings } from "../../src/policy/types.js";
import type { AnyTool, BoundGate, ToolContext, ToolResult } from "../../src/tools/types.js";

export { NO_TARGET } from "../../src/core/types.js";

export const ALLOW_ALL: BoundGate = () => ({ allow: true });

export function makeToolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    cwd: process.cwd(),
    config: defaultConfig(),
    mode: "guarded",
    signal: new AbortController().signal,
    timeoutMs: 5000,
    gate: ALLOW_ALL,
    call: async (action) => `${action}: no call pipeline in this test context`,
    childEnv: { ...process.env },
    services: {},
    ...overrides,
  };
}

/**
 * The target the gate resolves for `input` in unrestricted mode (every path allowed, every
 * symlink followed): what the call pipeline hands a tool. For tests of a tool's own
 * behaviour; the policy itself is tested through the pipeline (test/agent/).
 */
export function unrestrictedTarget(tool: AnyTool, input: unknown, cwd: string): Target {
  const settings: GateSettings = {
    mode: "unrestricted",
    projectRoot: cwd,
    confineWrites: false,
    blockInternalHttp: false,
    secretPaths: [],
    protectedPaths: [],
    readableInside: [],
    protectedIdentities: new Set(),
    mcpAllowed: {},
    realpath: resolvePhysical,
  };
  const effects = tool.effects(input);
  const judge = (p: string, j: typeof judgeReadPath): string => {
    const v = j(p, settings);
    if (!v.allow) throw new Error(`unrestricted gate refused ${tool.name} ${p}: ${v.reason}`);
    return v.target;
  };
  return {
    read: (effects.readPaths ?? []).map((p) => judge(p, judgeReadPath)),
    write: (effects.writePaths ?? []).map((p) => judge(p, judgeWritePath)),
  };
}

/** Runs a tool as the pipeline would, with the unrestricted target of its input: its whole result. */
export function runToolResult<I>(tool: AnyTool, input: I, ctx: ToolContext): Promise<ToolResult> {
  return tool.run(input, ctx, unrestrictedTarget(tool, input, ctx.cwd));
}

/** As runToolResult, the observation text only (what most tool tests compare). */
export async function runTool<I>(tool: AnyTool, input: I, ctx: ToolContext): Promise<string> {
  return (await runToolResult(tool, input, ctx)).text;
}
