/** The `sandbox` line of `scoot doctor`: what bash runs under, and the fix when it is not contained. */
import type { Config } from "../config/schema.js";
import { probeSandbox } from "./probe.js";

export interface SandboxCheck {
  status: "OK" | "WARN" | "FAIL";
  detail: string;
}

export async function sandboxCheck(config: Config, _env: NodeJS.ProcessEnv): Promise<SandboxCheck> {
  const setting = config.tools.sandbox;
  if (setting === "off") {
    return {
      status: "WARN",
      detail:
        'tools.sandbox = "off": guarded bash runs with the tripwire only. Fix: set tools.sandbox = "auto"',
    };
  }
  const probe = await probeSandbox(config.tools.sandbox_bwrap_path);
  if (probe.ok) {
    const net = config.tools.sandbox_network ? "network shared" : "network off";
    if (!probe.seccomp.ok) {
      const userns = probe.disableUserns ? "" : ", and nested user namespaces can be created";
      return {
        status: "WARN",
        detail: `bwrap ${probe.version} at ${probe.bwrap} (${net}) without the seccomp filter: ${probe.seccomp.reason}; host services on Unix sockets outside the hidden runtime directories, vsock and the session keyring stay reachable${userns}. Fix: bubblewrap 0.8+ on an x86_64 or aarch64 kernel with seccomp`,
      };
    }
    return { status: "OK", detail: `bwrap ${probe.version} at ${probe.bwrap} (${net}, seccomp on)` };
  }
  if (setting === "bwrap") {
    return {
      status: "FAIL",
      detail: `tools.sandbox = "bwrap" but ${probe.reason}: every bash call will be denied. Fix: ${probe.fix}`,
    };
  }
  return {
    status: "WARN",
    detail: `${probe.reason}: bash runs with the tripwire only (tools.sandbox = auto). Fix: ${probe.fix}`,
  };
}

/**
 * The `user` line: a root Scoot runs a root sandbox, and root-owned secrets that the
 * sandbox does not hide by name (/etc/shadow, other users' files) stay readable to it.
 */
export function rootUserCheck(euid: number | undefined = process.geteuid?.()): SandboxCheck {
  if (euid === 0) {
    return {
      status: "WARN",
      detail:
        "Scoot runs as root: a sandboxed command is root too and can read root-only files such as /etc/shadow. Fix: run Scoot as an ordinary (non-root) user",
    };
  }
  return { status: "OK", detail: `uid ${euid ?? "unknown"} (not root)` };
}
