/**
 * Doctor's `context` line (docs/context.md "Context window"): the model's window and where it
 * came from, the history budget it leaves, and the size of the system prompt. WARN below the
 * window at which Scoot works well, with the fix for that server; FAIL when the system prompt,
 * step schema and a goal cannot fit at all (every run would stop before its first call).
 */
import os from "node:os";
import { historyBytes } from "../agent/compact.js";
import {
  computeBudget,
  DEFAULT_BYTES_PER_TOKEN,
  doesNotFitMessage,
  MIN_TURN_BYTES,
} from "../agent/context-fit.js";
import { stepSchemaBytes } from "../agent/context-setup.js";
import { loadProjectInstructions } from "../agent/project-instructions.js";
import { buildSystemPrompt } from "../agent/prompt.js";
import { describeWindow, discoverContextWindow, windowFix } from "../backend/context-window.js";
import type { HomePaths } from "../config/home.js";
import { validateMcpServers } from "../config/mcp-servers.js";
import type { Config } from "../config/schema.js";
import { cachedMcpTools } from "../mcp/catalog.js";
import { mcpPromptSection } from "../mcp/prompt.js";
import { discoverSkills } from "../skills/discover.js";
import { skillsPromptSection } from "../skills/prompt.js";
import { enabledTools } from "../tools/registry.js";
import type { Check } from "./doctor-check.js";

/** Below this many tokens a run spends most of its window on the system prompt and compacts every turn. */
export const COMFORTABLE_WINDOW_TOKENS = 8_192;
/** A typical one-line goal, for the fit check before any goal is known. */
const TYPICAL_GOAL = "x".repeat(200);

function systemPrompt(
  config: Config,
  cwd: string,
  home: Pick<HomePaths, "root" | "configDir">,
  stateDir: string,
): { text: string; toolNames: string[] } {
  const mcp = validateMcpServers(config.mcp.servers);
  const skills = config.skills.enabled
    ? discoverSkills({ config, cwd, homeDir: os.homedir(), scootHome: home.root, configDir: home.configDir })
        .skills
    : [];
  const tools = enabledTools({ hasMcp: mcp.servers.length > 0, hasSkills: skills.length > 0 });
  const text = buildSystemPrompt({
    tools: [...tools.values()],
    mode: config.tools.policy,
    cwd,
    skillsSection: skills.length > 0 ? skillsPromptSection(skills) : undefined,
    mcpSection: mcpPromptSection(mcp.servers, cachedMcpTools(mcp.servers, stateDir)) || undefined,
    projectSection:
      config.agent.project_instructions === false
        ? undefined
        : loadProjectInstructions(cwd, config.agent.project_instructions_max_bytes).section || undefined,
  });
  return { text, toolNames: [...tools.keys()] };
}

export async function contextCheck(
  config: Config,
  cwd: string,
  home: Pick<HomePaths, "root" | "configDir" | "state">,
  token: string | undefined,
): Promise<Check> {
  // Asked afresh (the cache is refreshed, not read): doctor reports what the server says now.
  const stateDir = home.state;
  const window = await discoverContextWindow({ backend: config.backend, token, stateDir, readCache: false });
  const prompt = systemPrompt(config, cwd, home, stateDir);
  const promptBytes = Buffer.byteLength(prompt.text);
  const schemaBytes = stepSchemaBytes(prompt.toolNames);
  const budget = computeBudget({
    window,
    configuredBytes: config.agent.context_budget_bytes,
    bytesPerToken: DEFAULT_BYTES_PER_TOKEN,
    schemaBytes,
  });
  const from = budget.windowDriven ? "set by the window" : "agent.context_budget_bytes";
  const notes = window.notes.length > 0 ? `; discovery: ${window.notes.join("; ")}` : "";
  const detail = `${describeWindow(window)}; history budget ${budget.bytes} bytes (${from}); system prompt ${promptBytes} bytes${notes}`;
  if (window.tokens === undefined) return { name: "context", status: "OK", detail };
  const pinned = historyBytes([
    { role: "system", content: prompt.text },
    { role: "user", content: TYPICAL_GOAL },
  ]);
  if (budget.windowDriven && pinned + MIN_TURN_BYTES > budget.bytes)
    return {
      name: "context",
      status: "FAIL",
      detail: `${detail}: ${doesNotFitMessage(window, pinned, schemaBytes, DEFAULT_BYTES_PER_TOKEN)}`,
    };
  if (window.tokens < COMFORTABLE_WINDOW_TOKENS)
    return {
      name: "context",
      status: "WARN",
      detail: `${detail}; below ${COMFORTABLE_WINDOW_TOKENS} tokens Scoot compacts almost every turn: ${windowFix(window.flavour, COMFORTABLE_WINDOW_TOKENS)}`,
    };
  return { name: "context", status: "OK", detail };
}
