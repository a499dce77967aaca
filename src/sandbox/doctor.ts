/** The `sandbox` line of `scoot doctor` (issue 11): what bash runs under, and the fix when it is not contained. */
import type { Config } from "../config/schema.js";
import { probeSandbox } from "./probe.js";

export interface SandboxCheck {
  status: "OK" | "WARN" | "FAIL";
  detail: string;
}

export async function sandboxCheck(config: Config, env: NodeJS.ProcessEnv): Promise<SandboxCheck> {
  const setting = config.tools.sandbox;
  if (setting === "off") {
    return {
      status: "WARN",
      detail:
        'tools.sandbox = "off": guarded bash runs with the tripwire only. Fix: set tools.sandbox = "auto"',
    };
  }
  const probe = await probeSandbox(env.PATH ?? process.env.PATH);
  if (probe.ok) {
    const net = config.tools.sandbox_network ? "network shared" : "network off";
    return { status: "OK", detail: `bwrap ${probe.version} (${net})` };
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
