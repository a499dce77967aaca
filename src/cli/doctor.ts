/**
 * `scoot doctor`: health checks, each OK / WARN / FAIL with a one-line detail.
 * Exit 1 on any FAIL. Checks never print a secret value (only where it came from).
 */
import fs from "node:fs";
import { checkRules } from "../agent/approval-rules.js";
import { chosenCompileCacheDir, type WorkPlaces } from "../config/compile-cache-dir.js";
import { resolveHomePaths, userHomeDir } from "../config/home.js";
import { loadConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { resolveToken, tokenFilePath } from "../config/secrets.js";
import { redact } from "../core/redact.js";
import { auditFiles, readGaps } from "../store/audit-rotation.js";
import { flagBool, flagString } from "./args.js";
import { applyBackendFlags } from "./backend-flags.js";
import type { Cli } from "./context.js";
import { auditChecks } from "./doctor-audit.js";
import type { Check } from "./doctor-check.js";
import { EXIT } from "./io.js";

/** Doctor must answer quickly even when the backend hangs. */
export const DOCTOR_BACKEND_TIMEOUT_MS = 3_000;
const MIN_NODE_MAJOR = 20;

function modeString(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, "0");
}

function checkHome(root: string): Check {
  try {
    const st = fs.statSync(root);
    if (!st.isDirectory()) return { name: "home", status: "FAIL", detail: `${root} is not a directory` };
    fs.accessSync(root, fs.constants.W_OK);
    if ((st.mode & 0o077) !== 0) {
      return {
        name: "home",
        status: "WARN",
        detail: `${root} has mode ${modeString(st.mode)}; others can read it. Fix: chmod 700 ${root}`,
      };
    }
    return { name: "home", status: "OK", detail: `${root} (mode ${modeString(st.mode)})` };
  } catch (e) {
    return { name: "home", status: "FAIL", detail: `${root}: ${(e as Error).message}` };
  }
}

/** Only when `SCOOT_COMPILE_CACHE` names a directory: whether runs use it, or why not. */
function checkCompileCache(env: NodeJS.ProcessEnv, work: WorkPlaces): Check | undefined {
  const chosen = chosenCompileCacheDir(env, work);
  if (chosen === undefined) return undefined;
  return chosen.ok
    ? { name: "compile_cache", status: "OK", detail: `${chosen.dir} (SCOOT_COMPILE_CACHE)` }
    : { name: "compile_cache", status: "WARN", detail: chosen.problem };
}

function checkAuditWritable(config: Config, logsDir: string): Check {
  if (!config.audit.to_file)
    return { name: "audit.file", status: "WARN", detail: "audit.to_file = false: no audit log is written" };
  try {
    fs.accessSync(logsDir, fs.constants.W_OK);
    return {
      name: "audit.file",
      status: "OK",
      detail: `${logsDir} is writable (level ${config.audit.level})`,
    };
  } catch (e) {
    return { name: "audit.file", status: "FAIL", detail: `${logsDir}: ${(e as Error).message}` };
  }
}

function checkRetention(live: string): Check {
  let read: ReturnType<typeof readGaps>;
  try {
    read = readGaps(live);
  } catch (e) {
    return { name: "audit.retention", status: "WARN", detail: (e as Error).message };
  }
  const { gaps, warnings } = read;
  if (gaps.length > 0) {
    const first = gaps[0]!;
    const last = gaps[gaps.length - 1]!;
    return {
      name: "audit.retention",
      status: "WARN",
      detail: `${gaps.length} retired generation(s) evicted (${first.gap_from}..${last.gap_to}); see ${auditFiles(live).gaps}. Raise audit.max_retained_generations to keep more`,
    };
  }
  if (warnings.length > 0) return { name: "audit.retention", status: "WARN", detail: warnings[0]! };
  return { name: "audit.retention", status: "OK", detail: "no generations evicted" };
}

function checkToken(config: Config, root: string, env: NodeJS.ProcessEnv, cwd: string): Check[] {
  const token = resolveToken(config, root, env, cwd);
  const checks: Check[] = [];
  if (token.error) checks.push({ name: "token", status: "FAIL", detail: token.error });
  else checks.push({ name: "token", status: "OK", detail: token.detail });
  const file = tokenFilePath(config, root);
  if (token.source !== "file" && fs.existsSync(file)) {
    const mode = fs.statSync(file).mode & 0o777;
    if (mode !== 0o600) {
      checks.push({
        name: "token.file",
        status: "WARN",
        detail: `${file} has mode ${modeString(mode)} (unused now, but would be refused). Fix: chmod 600 ${file}`,
      });
    }
  }
  return checks;
}

function checkPolicy(config: Config): Check {
  if (config.tools.policy === "unrestricted") {
    return {
      name: "policy",
      status: "WARN",
      detail: "tools.policy = unrestricted: shell and writes are not screened",
    };
  }
  const hardening: string[] = [];
  if (config.tools.policy === "guarded" && !config.tools.confine_writes) hardening.push("confine_writes off");
  if (config.tools.policy === "guarded" && !config.tools.block_internal_http)
    hardening.push("block_internal_http off");
  if (hardening.length > 0)
    return { name: "policy", status: "WARN", detail: `${config.tools.policy} with ${hardening.join(", ")}` };
  return {
    name: "policy",
    status: "OK",
    detail: `${config.tools.policy} (unattended ceiling ${config.edge.max_job_policy})`,
  };
}

/** The backend check names at most this many of the server's models. */
const DOCTOR_MODELS_NAMED = 10;

async function checkBackend(config: Config, token: string | undefined): Promise<Check> {
  const { probeBackendInfo } = await import("../backend/probe.js");
  const r = await probeBackendInfo(config.backend, token, DOCTOR_BACKEND_TIMEOUT_MS);
  if (!r.ok) return { name: "backend", status: "FAIL", detail: r.error.message };
  const { models, ids, hasModel, latencyMs } = r.value;
  const where = `${config.backend.base_url}: ${models} model${models === 1 ? "" : "s"} listed`;
  const model = config.backend.model;
  if (hasModel)
    return { name: "backend", status: "OK", detail: `${where}, ${model} among them (${latencyMs} ms)` };
  // Servers that load models on demand may still serve it, so this warns rather than fails.
  const shown = ids.slice(0, DOCTOR_MODELS_NAMED).join(", ");
  const more = ids.length > DOCTOR_MODELS_NAMED ? ` and ${ids.length - DOCTOR_MODELS_NAMED} more` : "";
  return {
    name: "backend",
    status: "WARN",
    detail: `${where}; backend.model "${model}" is not among them (listed: ${shown || "none"}${more}); fix: set backend.model (or --model) to a listed model (${latencyMs} ms)`,
  };
}

export async function runDoctor(cli: Cli): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot doctor: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const paths = resolveHomePaths(flagString(cli.args, "scoot-home"), cli.env);
  const root = paths.root;
  const checks: Check[] = [];
  const major = Number(process.versions.node.split(".")[0]);
  checks.push({
    name: "node",
    status: major >= MIN_NODE_MAJOR ? "OK" : "FAIL",
    detail: `Node.js ${process.versions.node}${major >= MIN_NODE_MAJOR ? "" : ` (needs >= ${MIN_NODE_MAJOR})`}`,
  });
  try {
    fs.mkdirSync(paths.logs, { recursive: true, mode: 0o700 });
    fs.mkdirSync(paths.sessions, { recursive: true, mode: 0o700 });
  } catch {
    // checkHome reports it
  }
  checks.push(checkHome(root));
  const compileCache = checkCompileCache(cli.env, { userHome: userHomeDir(cli.env), projectRoot: cli.cwd });
  if (compileCache) checks.push(compileCache);
  const loaded = loadConfig(paths.configDir, cli.env);
  if (!loaded.ok) {
    for (const p of loaded.error.problems) checks.push({ name: "config", status: "FAIL", detail: p });
    for (const w of loaded.error.warnings) checks.push({ name: "config", status: "WARN", detail: w });
  } else {
    const { config, file, warnings } = loaded.value;
    checks.push({ name: "config", status: "OK", detail: file ?? "no config file (defaults)" });
    // `--model` asks for the model check: alone it names no model; with a name, that model is
    // the backend's for every check (docs/keyboard.md "Health checks").
    const modelCheck = cli.args.flags.model !== undefined;
    const backendArgs =
      cli.args.flags.model === true
        ? {
            ...cli.args,
            flags: Object.fromEntries(Object.entries(cli.args.flags).filter(([k]) => k !== "model")),
          }
        : cli.args;
    const flags = applyBackendFlags(config, backendArgs);
    if (!flags.ok) checks.push({ name: "config", status: "FAIL", detail: flags.error });
    for (const w of warnings) checks.push({ name: "config", status: "WARN", detail: w });
    for (const p of checkRules(config.tools.rules).problems)
      checks.push({ name: "config", status: "FAIL", detail: p });
    const tokenChecks = checkToken(config, paths.configDir, cli.env, cli.cwd);
    checks.push(...tokenChecks);
    checks.push(checkPolicy(config));
    checks.push(checkAuditWritable(config, paths.logs));
    checks.push(checkRetention(paths.audit));
    checks.push(...auditChecks(config, paths.audit));
    const { capabilityChecks } = await import("./doctor-capabilities.js");
    checks.push(...(await capabilityChecks(config, cli, paths)));
    const token = resolveToken(config, paths.configDir, cli.env, cli.cwd);
    checks.push(await checkBackend(config, token.token));
    const { contextCheck } = await import("./doctor-context.js");
    checks.push(await contextCheck(config, cli.cwd, paths, token.token));
    const { telemetryChecks } = await import("./doctor-telemetry.js");
    checks.push(...(await telemetryChecks(config, paths, cli.env)));
    if (modelCheck) {
      const { modelChecks } = await import("./doctor-model.js");
      checks.push(...(await modelChecks(config, token.token)));
    }
  }
  const failed = checks.some((c) => c.status === "FAIL");
  if (flagBool(cli.args, "json")) {
    cli.io.out(`${redact(JSON.stringify({ ok: !failed, checks }))}\n`);
  } else {
    const width = Math.max(...checks.map((c) => c.name.length));
    for (const c of checks)
      cli.io.out(`${c.status.padEnd(4)}  ${c.name.padEnd(width)}  ${redact(c.detail)}\n`);
  }
  return failed ? EXIT.failed : EXIT.ok;
}
