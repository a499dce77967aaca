/**
 * How one `bash` call is started (issue 11, README "Shell containment"): directly, as
 * before, or under bubblewrap. The sandbox applies in `guarded` mode and in unattended runs
 * that may run bash; `unrestricted` at the keyboard is the operator's explicit choice and
 * runs directly. `tools.sandbox = "bwrap"` fails closed: no sandbox, no command. `auto`
 * falls back to the tripwire alone and says so once on the trace.
 */
import os from "node:os";
import path from "node:path";
import { resolveHomeDir } from "../config/home.js";
import type { Config, PolicyMode } from "../config/schema.js";
import { tokenFilePath } from "../config/secrets.js";
import type { ToolContext } from "../tools/types.js";
import { bwrapArgv } from "./bwrap.js";
import { scrubEnv } from "./env.js";
import { type Probe, probeSandbox } from "./probe.js";

/** What the session knows and a tool context does not; attached as `services.sandbox`. */
export interface SandboxService {
  /** Scoot's home (hidden whole). */
  scootHome: string;
  /** The backend token file. */
  tokenFile: string;
  /** `--unattended` runs and scheduled jobs. */
  unattended: boolean;
  /** One line for `--trace` (the `auto` fallback). */
  notify?: (message: string) => void;
}

export type ShellLaunch =
  | { ok: true; file: string; args: string[]; env: NodeJS.ProcessEnv; sandboxed: boolean }
  | { ok: false; error: string };

/** Whether bash in this mode is meant to run sandboxed (the setting aside). */
export function sandboxApplies(mode: PolicyMode, unattended: boolean): boolean {
  if (mode === "guarded") return true;
  return mode === "unrestricted" && unattended;
}

/** `~` and `~/x` mean the user's home, relative paths the project root (as the gate reads them). */
function absolute(p: string, root: string, home: string): string {
  if (p === "~") return home;
  if (p.startsWith("~/")) return path.join(home, p.slice(2));
  return path.resolve(root, p);
}

function describeMissing(probe: Extract<Probe, { ok: false }>): string {
  return `${probe.reason}. Fix: ${probe.fix}`;
}

const noticed = new WeakSet<SandboxService>();

function serviceOf(ctx: ToolContext): SandboxService {
  const given = ctx.services.sandbox;
  if (given) return given;
  const scootHome = resolveHomeDir(undefined, ctx.childEnv);
  return { scootHome, tokenFile: tokenFilePath(ctx.config, scootHome), unattended: false };
}

export function fallbackNotice(probe: Extract<Probe, { ok: false }>): string {
  return `sandbox unavailable, bash runs with the tripwire only (tools.sandbox = auto): ${describeMissing(probe)}`;
}

export async function shellLaunch(shell: string, command: string, ctx: ToolContext): Promise<ShellLaunch> {
  const direct: ShellLaunch = {
    ok: true,
    file: shell,
    args: ["-c", command],
    env: ctx.childEnv,
    sandboxed: false,
  };
  const config: Config = ctx.config;
  const setting = config.tools.sandbox;
  const service = serviceOf(ctx);
  if (setting === "off" || !sandboxApplies(ctx.mode, service.unattended)) return direct;
  const probe = await probeSandbox(ctx.childEnv.PATH ?? process.env.PATH);
  if (!probe.ok) {
    if (setting === "bwrap") {
      return {
        ok: false,
        error: `bash: denied: tools.sandbox = "bwrap" but the sandbox cannot start: ${describeMissing(probe)}. The command was not run.`,
      };
    }
    if (!noticed.has(service)) {
      noticed.add(service);
      service.notify?.(fallbackNotice(probe));
    }
    return direct;
  }
  const userHome = ctx.childEnv.HOME || os.homedir();
  const root = path.resolve(ctx.cwd);
  const secretPaths = config.tools.secret_paths
    .filter((p) => typeof p === "string" && p.trim() !== "")
    .map((p) => absolute(p.trim(), root, userHome));
  const args = bwrapArgv(
    {
      projectRoot: root,
      cwd: root,
      userHome,
      scootHome: service.scootHome,
      tokenFile: service.tokenFile,
      secretPaths,
      network: config.tools.sandbox_network,
    },
    shell,
    command,
  );
  const { env } = scrubEnv(ctx.childEnv, {
    tokenVar: config.backend.api_key_env || undefined,
    passthrough: config.tools.env_passthrough,
  });
  return { ok: true, file: probe.bwrap, args, env, sandboxed: true };
}
