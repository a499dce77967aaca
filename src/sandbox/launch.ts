/**
 * How one `bash` call is started (docs/safety.md "Shell containment"): directly, as
 * before, or under bubblewrap. The sandbox applies in `guarded` mode and in unattended runs
 * that may run bash; `unrestricted` at the keyboard is the operator's explicit choice and
 * runs directly. `tools.sandbox = "bwrap"` fails closed: no sandbox, no command. `auto`
 * falls back to the tripwire alone and says so once on the trace.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { resolveHomeDirs } from "../config/home.js";
import type { Config, PolicyMode } from "../config/schema.js";
import { tokenFilePath } from "../config/secrets.js";
import { isInside } from "../core/inside.js";
import { type ProtectedPlaces, protectedPlaces } from "../policy/settings.js";
import { bwrapArgv, hiddenPlaces } from "./bwrap.js";
import { scrubEnv } from "./env.js";
import { closeInheritableFds } from "./fds.js";
import { gatedShellArgs, SANDBOX_INIT_PROC } from "./gate.js";
import { watchGitPlaces } from "./persistence-mounts.js";
import { checkPinned, type Probe, probeSandbox, SECCOMP_FD } from "./probe.js";
import { seccompProgram } from "./seccomp.js";

/** What the session knows and a tool context does not; attached as `services.sandbox`. */
export interface SandboxService {
  /** Scoot's home (hidden whole). */
  scootHome: string;
  /** Where the configuration lives when it is not the home (XDG; hidden whole too). */
  configDir?: string;
  /** The backend token file. */
  tokenFile: string;
  /** Loaded skills' folders (shown read-only inside the sandbox). */
  skillDirs?: readonly string[];
  /**
   * The gate's resolved secret and protected places: the sandbox hides what the gate refuses.
   * Absent (a tool context built without a session), they are resolved from the context.
   */
  places?: ProtectedPlaces;
  /** `--unattended` runs and scheduled jobs. */
  unattended: boolean;
  /** One line for `--trace` (the `auto` fallback). */
  notify?: (message: string) => void;
  /**
   * While a plan binds (docs/safety.md "Plan mode"): bash runs sandboxed in every mode, may
   * write only the plan's files (absolute) and has no network unless the plan names a host.
   */
  plan?: { files: readonly string[]; hosts: readonly string[] };
}

export type ShellLaunch =
  | {
      ok: true;
      file: string;
      args: string[];
      env: NodeJS.ProcessEnv;
      sandboxed: boolean;
      /** The seccomp filter, written to the child's fd SECCOMP_FD (bwrap reads and closes it). */
      seccomp?: Buffer;
      /** Run once the call's processes are gone: a note for the observation, if any (persistence-mounts.ts). */
      after?: () => string | undefined;
    }
  | { ok: false; error: string };

/** Whether bash in this mode is meant to run sandboxed (the setting aside). */
export function sandboxApplies(mode: PolicyMode, unattended: boolean): boolean {
  if (mode === "guarded") return true;
  return mode === "unrestricted" && unattended;
}

function describeMissing(probe: Extract<Probe, { ok: false }>): string {
  return `${probe.reason}. Fix: ${probe.fix}`;
}

/** What a shell launch reads from the tool call (a tool's context satisfies it). */
export interface LaunchContext {
  cwd: string;
  config: Config;
  mode: PolicyMode;
  childEnv: NodeJS.ProcessEnv;
  services: { sandbox?: SandboxService };
}

const noticed = new WeakSet<SandboxService>();

function serviceOf(ctx: Omit<LaunchContext, "mode">): SandboxService {
  const given = ctx.services.sandbox;
  if (given) return given;
  const dirs = resolveHomeDirs(undefined, ctx.childEnv);
  return {
    scootHome: dirs.root,
    configDir: dirs.configDir,
    tokenFile: tokenFilePath(ctx.config, dirs.configDir),
    unattended: false,
  };
}

/** What the sandbox hides, as the layout takes it: one computation for bash and for glob. */
function protectedLayout(ctx: Omit<LaunchContext, "mode">, service: SandboxService, root: string) {
  const userHome = ctx.childEnv.HOME || os.homedir();
  // The places Scoot's own credential-pointing variables name (KUBECONFIG and friends) are among
  // the secrets, hidden like the stores; the variables themselves may still reach the command.
  const places =
    service.places ??
    protectedPlaces(ctx.config, root, {
      tokenFile: service.tokenFile,
      scootHome: service.scootHome,
      ...(service.configDir ? { configDir: service.configDir } : {}),
      env: ctx.childEnv,
      userHome,
    });
  return {
    projectRoot: root,
    cwd: root,
    userHome,
    scootHome: service.scootHome,
    tokenFile: service.tokenFile,
    ownPlaces: places.protectedPaths,
    secretPaths: places.secretPaths,
  };
}

/**
 * The real paths of the protected places the sandbox hides (Scoot's home and places, the token
 * file, tools.secret_paths, the credential stores and the places credential variables name),
 * for tools that list names (glob) and must not show what bash could not see either.
 */
export function hiddenPlacePaths(ctx: Omit<LaunchContext, "mode">): string[] {
  const service = serviceOf(ctx);
  const compute = () => {
    const layout = protectedLayout(ctx, service, path.resolve(ctx.cwd));
    return hiddenPlaces({ ...layout, network: false }).map((h) => h.path);
  };
  // Kept with the gate's places for a stretch of reads (policy/realpath.ts), keyed by the
  // directory the listing starts from.
  const kept = service.places?.places;
  return kept ? kept.memo(`hidden:${path.resolve(ctx.cwd)}`, compute) : compute();
}

export function fallbackNotice(probe: Extract<Probe, { ok: false }>): string {
  return `sandbox unavailable, bash runs with the tripwire only (tools.sandbox = auto): ${describeMissing(probe)}`;
}

export async function shellLaunch(shell: string, command: string, ctx: LaunchContext): Promise<ShellLaunch> {
  const direct: ShellLaunch = {
    ok: true,
    file: shell,
    args: gatedShellArgs(shell, command),
    env: ctx.childEnv,
    sandboxed: false,
  };
  const config: Config = ctx.config;
  const setting = config.tools.sandbox;
  const service = serviceOf(ctx);
  const bound = service.plan;
  if (setting === "off" || (!bound && !sandboxApplies(ctx.mode, service.unattended))) return direct;
  const probe = await probeSandbox(config.tools.sandbox_bwrap_path);
  if (!probe.ok) {
    if (setting === "bwrap") {
      return {
        ok: false,
        error: `bash: denied: tools.sandbox = "bwrap" but the sandbox cannot start: ${describeMissing(probe)}. The command was not run.`,
      };
    }
    if (!noticed.has(service)) {
      noticed.add(service);
      const plan = bound
        ? "; the approved plan is held by its commands' words only, not by a read-only project"
        : "";
      service.notify?.(`${fallbackNotice(probe)}${plan}`);
    }
    return direct;
  }
  const root = path.resolve(ctx.cwd);
  // A binary the command itself could have written, or one swapped since it passed its
  // trial, is refused in every setting: running it would be running the attacker's program.
  const untrusted = isInside(fs.realpathSync(probe.bwrap), realOr(root))
    ? `${probe.bwrap} lies inside the project, where a command can replace it`
    : checkPinned(probe);
  if (untrusted) {
    return {
      ok: false,
      error: `bash: denied: the sandbox binary is not trusted: ${untrusted}. Fix: reinstall bubblewrap or set tools.sandbox_bwrap_path, then restart Scoot. The command was not run.`,
    };
  }
  const filter = probe.seccomp.ok ? seccompProgram() : undefined;
  const args = bwrapArgv(
    {
      ...protectedLayout(ctx, service, root),
      skillDirs: service.skillDirs ?? [],
      runtimeDir: ctx.childEnv.XDG_RUNTIME_DIR,
      // A binding plan that names no host leaves bash no network, whatever the setting.
      network: config.tools.sandbox_network && (!bound || bound.hosts.length > 0),
      ...(bound ? { planFiles: bound.files } : {}),
      ...(filter?.ok ? { seccompFd: SECCOMP_FD } : {}),
      disableUserns: probe.disableUserns,
    },
    shell,
    gatedShellArgs(
      shell,
      command,
      filter?.ok
        ? { kind: "seccomp", proc: SANDBOX_INIT_PROC }
        : { kind: "waiting", proc: SANDBOX_INIT_PROC },
    ),
  );
  const { env } = scrubEnv(ctx.childEnv, {
    tokenVar: config.backend.api_key_env || undefined,
    passthrough: config.tools.env_passthrough,
  });
  // Only 0-2 may reach the command (fds.ts).
  closeInheritableFds();
  return {
    ok: true,
    file: probe.bwrap,
    args,
    env,
    sandboxed: true,
    ...(filter?.ok ? { seccomp: filter.program } : {}),
    after: watchGitPlaces(realOr(root)),
  };
}

function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
