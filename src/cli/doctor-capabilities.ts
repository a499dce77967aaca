/**
 * Doctor checks of what a run may use besides the backend: the sandbox, the user Scoot runs
 * as, skills, MCP servers and scheduled jobs. Loaded lazily by doctor.ts (MCP and skills
 * modules are heavy).
 */
import os from "node:os";
import path from "node:path";
import type { HomePaths } from "../config/home.js";
import { validateMcpServers } from "../config/mcp-servers.js";
import { type Config, effectiveToolTimeout, type McpServerConfig } from "../config/schema.js";
import { isPinnedSpec, launchIsPinned, nodeScript, packageLaunch } from "../mcp/launcher.js";
import { mcpServerSummary } from "../mcp/prompt.js";
import { rootUserCheck, sandboxCheck } from "../sandbox/doctor.js";
import { validateJobs } from "../schedule/jobs.js";
import { discoverSkills } from "../skills/discover.js";
import { projectRoot } from "../store/session-meta.js";
import { closestCommand } from "./command-hint.js";
import type { Cli } from "./context.js";
import type { Check } from "./doctor-check.js";

function skillChecks(config: Config, cli: Cli, home: Pick<HomePaths, "root" | "configDir">): Check[] {
  if (!config.skills.enabled)
    return [{ name: "skills", status: "OK", detail: "disabled (skills.enabled = false)" }];
  const d = discoverSkills({
    config,
    cwd: cli.cwd,
    homeDir: os.homedir(),
    scootHome: home.root,
    configDir: home.configDir,
  });
  const checks: Check[] = [
    {
      name: "skills",
      status: "OK",
      detail: `${d.skills.length} skill(s) loaded${d.shadowed.length ? `, ${d.shadowed.length} shadowed` : ""}`,
    },
  ];
  for (const p of d.problems)
    checks.push({
      name: "skills",
      status: "WARN",
      detail: `${p.file}: ${p.message} (see scoot skills check)`,
    });
  return checks;
}

/** Doctor waits at most this long for one MCP server to connect and list its tools. */
export const DOCTOR_MCP_TIMEOUT_MS = 10_000;

/** The server's tools named in a FAIL line; the rest are counted. */
const LISTED_NAMES_SHOWN = 20;

/**
 * An allowed tool the server does not list can never be called: a typo, or a tool the server
 * dropped. Named with the closest listed name and the server's tools.
 */
function missingAllowedTools(s: McpServerConfig, listed: readonly string[]): string | undefined {
  const missing = s.allowed_tools.filter((t) => !listed.includes(t));
  if (missing.length === 0) return undefined;
  const named = missing.map((t) => {
    const near = closestCommand(t, listed);
    return near ? `${JSON.stringify(t)} (closest: ${JSON.stringify(near)})` : JSON.stringify(t);
  });
  const shown = listed.slice(0, LISTED_NAMES_SHOWN).join(", ");
  const more = listed.length > LISTED_NAMES_SHOWN ? `, …${listed.length - LISTED_NAMES_SHOWN} more` : "";
  return `allowed_tools names ${named.join(", ")}, which the server does not list (it lists: ${shown || "nothing"}${more}). Fix: correct allowed_tools in this [[mcp.servers]] entry`;
}

/**
 * Each configured server is really connected (a stdio server spawned, a remote one
 * handshaken) and asked for its tools, within the tool deadline (at most
 * DOCTOR_MCP_TIMEOUT_MS); a server that cannot is a FAIL with the reason, and so is an
 * allowed tool it does not list.
 */
async function mcpChecks(config: Config, cli: Cli, root: string): Promise<Check[]> {
  if (config.mcp.servers.length === 0) return [];
  const { servers, problems } = validateMcpServers(config.mcp.servers);
  const env: NodeJS.ProcessEnv = { ...cli.env };
  // As in a run: the backend token never reaches a child process.
  if (config.backend.api_key_env) delete env[config.backend.api_key_env];
  const { createMcpPool } = await import("../mcp/pool.js");
  const configured = effectiveToolTimeout(config);
  const timeoutMs = Math.min(configured, DOCTOR_MCP_TIMEOUT_MS);
  const warnings: string[] = [];
  const pool = createMcpPool(servers, {
    caFile: config.backend.ca_file,
    env,
    timeoutMs,
    timeoutSetting:
      timeoutMs < configured
        ? `doctor waits at most ${DOCTOR_MCP_TIMEOUT_MS} ms; a run waits tools.timeout_ms = ${configured}`
        : `tools.timeout_ms = ${configured}`,
    projectRoot: projectRoot(cli.cwd),
    scootHome: root,
    bwrapPath: config.tools.sandbox_bwrap_path,
    onWarning: (message) => warnings.push(message),
  });
  let probes: Awaited<ReturnType<typeof pool.probe>>[];
  try {
    probes = await Promise.all(servers.map((s) => pool.probe(s.name)));
  } finally {
    await pool.close();
  }
  const checks: Check[] = servers.map((s, i) => {
    const probe = probes[i]!;
    if (!probe.ok) return { name: "mcp", status: "FAIL", detail: `${mcpServerSummary(s)}: ${probe.error}` };
    const listed = probe.value.tools;
    const missing = missingAllowedTools(s, listed);
    if (missing) return { name: "mcp", status: "FAIL", detail: `${mcpServerSummary(s)}: ${missing}` };
    const tools = `connected, ${listed.length} tool${listed.length === 1 ? "" : "s"} listed`;
    return {
      name: "mcp",
      status: s.allowed_tools.length === 0 ? "WARN" : "OK",
      detail: `${mcpServerSummary(s)}: ${tools}${s.allowed_tools.length === 0 ? " (every call will be denied)" : ""}`,
    };
  });
  for (const s of servers) {
    const why = resolvesFromWorkingDir(s);
    if (why)
      checks.push({
        name: "mcp",
        status: "WARN",
        detail: `${mcpServerSummary(s)}: ${why}, and the server runs on the host, unsandboxed. Scoot starts it in its home with a PATH that leaves out the project, but code is still taken from whatever that launcher resolves. Fix: install the server and set command to its absolute path (or pin the package: npx -y pkg@1.2.3)`,
      });
  }
  // The run would warn the same way: its stdio servers' processes are not held by a PID namespace.
  for (const w of warnings) checks.push({ name: "mcp", status: "WARN", detail: w });
  // An invalid entry is left out of every run: a configuration error the operator must see.
  for (const p of problems) checks.push({ name: "mcp", status: "FAIL", detail: p });
  return checks;
}

const PYTHON = /^python(\d+(\.\d+)?)?$/;

/**
 * Why a stdio server's command takes its code from its working directory or a package index,
 * if it does. A launcher whose every package is pinned to one exact version (`npx -y
 * pkg@1.2.3`, the fix the warning names) and `node -e <code>` are not warned about.
 */
export function resolvesFromWorkingDir(s: Pick<McpServerConfig, "command" | "args">): string | undefined {
  if (!s.command) return undefined;
  const program = path.basename(s.command);
  const args = s.args ?? [];
  const launch = packageLaunch(s.command, args);
  if (launch) {
    if (launchIsPinned(launch)) return undefined;
    const unpinned = launch.packages.filter((p) => !isPinnedSpec(p, launch.style));
    const named = unpinned.length > 0 ? ` (${unpinned.join(", ")} is not pinned to one version)` : "";
    return `${launch.launcher} resolves the package from its working directory and the registry${named}`;
  }
  if (PYTHON.test(program) && args.includes("-m"))
    return `${program} -m imports the module from its search path`;
  if (program === "node" || program === "deno" || program === "bun") {
    const found = nodeScript(args);
    if (found !== undefined && found !== "inline" && !path.isAbsolute(found.script))
      return `${program} runs the relative script ${found.script}`;
  }
  if (!path.isAbsolute(s.command) && s.command.includes("/"))
    return `the command ${s.command} is a relative path`;
  return undefined;
}

function scheduleChecks(config: Config): Check[] {
  if (config.schedule.jobs.length === 0 && !config.schedule.enabled) return [];
  const { jobs, invalid } = validateJobs(config);
  const checks: Check[] = [
    {
      name: "schedule",
      status: "OK",
      detail: `${config.schedule.enabled ? "enabled" : "disabled"}, ${jobs.length} valid job(s), poll ${config.schedule.poll_ms} ms`,
    },
  ];
  for (const bad of invalid)
    checks.push({ name: "schedule", status: "WARN", detail: `job ${bad.label} skipped: ${bad.reason}` });
  return checks;
}

export async function capabilityChecks(
  config: Config,
  cli: Cli,
  home: Pick<HomePaths, "root" | "configDir">,
): Promise<Check[]> {
  const sandbox = { name: "sandbox", ...(await sandboxCheck(config, cli.env)) };
  const user = { name: "user", ...rootUserCheck() };
  return [
    sandbox,
    user,
    ...skillChecks(config, cli, home),
    ...(await mcpChecks(config, cli, home.root)),
    ...scheduleChecks(config),
  ];
}
