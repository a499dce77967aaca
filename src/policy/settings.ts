/**
 * The gate's settings, built from the loaded configuration once per run: the secret and
 * protected places, the identities behind them, and the MCP allowlists. The gate itself
 * (gate.ts) only reads them.
 */
import os from "node:os";
import path from "node:path";
import { validateMcpServers } from "../config/mcp-servers.js";
import type { Config, McpServerConfig, PolicyMode } from "../config/schema.js";
import { lazyIdentities } from "./identity.js";
import {
  credentialPointerPaths,
  credentialStorePaths,
  DEFAULT_HOME_NAME,
  scootPlaces,
} from "./protected-places.js";
import { placeResolutions, resolvePhysical } from "./realpath.js";
import type { GateSettings } from "./types.js";

/** `~` and `~/x` in configured paths mean the user's home; relative paths the project root. */
function absolutePath(p: string, root: string, userHome: string): string {
  if (p === "~") return userHome;
  if (p.startsWith("~/")) return path.join(userHome, p.slice(2));
  return path.resolve(root, p);
}

/** The places the gate refuses, as absolute paths; see GateSettings for what each list holds. */
export type ProtectedPlaces = Pick<GateSettings, "secretPaths" | "protectedPaths" | "places">;

/**
 * The secret and protected places of a configuration in a project root, resolved once: the
 * gate's settings hold them, and the sandbox hides the same places.
 */
export function protectedPlaces(
  config: Config,
  projectRoot: string,
  opts: {
    tokenFile?: string;
    scootHome?: string;
    configDir?: string;
    env: NodeJS.ProcessEnv;
    userHome: string;
  },
): ProtectedPlaces & { own: string[]; stores: string[] } {
  const root = path.resolve(projectRoot);
  const { env, userHome } = opts;
  const secrets = new Set<string>();
  for (const p of config.tools.secret_paths) {
    if (typeof p === "string" && p.trim() !== "") secrets.add(absolutePath(p.trim(), root, userHome));
  }
  if (opts.tokenFile) secrets.add(path.resolve(root, opts.tokenFile));
  // Relative values resolve against Scoot's own working directory, as the CLIs reading them would.
  for (const p of credentialPointerPaths(env, process.cwd(), { userHome, projectRoot: root })) secrets.add(p);
  const own = opts.scootHome
    ? scootPlaces({
        config,
        scootHome: opts.scootHome,
        ...(opts.configDir ? { configDir: opts.configDir } : {}),
        userHome,
        env,
        projectRoot: root,
      })
    : [];
  const stores = credentialStorePaths(userHome);
  return { secretPaths: [...secrets], protectedPaths: [...own, ...stores], own, stores };
}

/**
 * MCP allowlists from `[[mcp.servers]]`. Entries without a string name, or whose
 * `allowed_tools` is not a list of strings, are skipped (the server stays unknown, so calls
 * to it are denied). A name listed twice keeps only the tools both entries allow.
 */
function mcpAllowlists(servers: readonly McpServerConfig[]): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null);
  for (const s of servers) out[s.name] = [...s.allowed_tools];
  return out;
}

/** The files of Scoot's home whose identity is protected (the rest is protected by path). */
const HOME_FILES = ["config.toml", "config.json", "token", "logs"];

/**
 * Builds the gate's settings from the loaded configuration, once per run. `scootHome` (the
 * home in use) adds Scoot's own places; `skillDirs` are the loaded skills' folders.
 */
export function buildGateSettings(
  config: Config,
  projectRoot: string,
  opts: {
    mode: PolicyMode;
    tokenFile?: string;
    scootHome?: string;
    /** Where the configuration lives when it is not the home (XDG). */
    configDir?: string;
    skillDirs?: readonly string[];
    /** `[[mcp.servers]]` already validated; absent: validated here. */
    mcpServers?: readonly McpServerConfig[];
    /** Scoot's environment, for the credential-pointing variables; process.env when absent. */
    env?: NodeJS.ProcessEnv;
  },
): GateSettings {
  const root = path.resolve(projectRoot);
  const places = protectedPlaces(config, root, {
    tokenFile: opts.tokenFile,
    scootHome: opts.scootHome,
    ...(opts.configDir ? { configDir: opts.configDir } : {}),
    env: opts.env ?? process.env,
    userHome: os.homedir(),
  });
  const { secretPaths, protectedPaths, own, stores } = places;
  const homeFiles = opts.scootHome ? HOME_FILES.map((f) => path.join(opts.scootHome!, f)) : [];
  const ownFiles = own.filter(
    (p) =>
      !homeFiles.includes(p) &&
      p !== opts.scootHome &&
      p !== opts.configDir &&
      !p.endsWith(`/${DEFAULT_HOME_NAME}`),
  );
  const stateDir = opts.scootHome ? [path.join(opts.scootHome, "state")] : [];
  return {
    mode: opts.mode,
    projectRoot: root,
    confineWrites: config.tools.confine_writes,
    blockInternalHttp: config.tools.block_internal_http,
    secretPaths,
    protectedPaths,
    readableInside: [...(opts.skillDirs ?? [])],
    // state/ (transcripts, checkpoints) last: the shared file budget goes to secrets first.
    protectedIdentities: lazyIdentities(() => [
      ...secretPaths,
      ...ownFiles,
      ...homeFiles,
      ...stores,
      ...stateDir,
    ]),
    // Only entries that pass validation exist for the gate: a rejected entry is an unknown
    // server, denied and audited here rather than failing later inside the MCP pool. A caller
    // that validated them already (the session runner) passes the result.
    mcpAllowed: mcpAllowlists(opts.mcpServers ?? validateMcpServers(config.mcp.servers).servers),
    realpath: resolvePhysical,
    places: placeResolutions(root),
  };
}
