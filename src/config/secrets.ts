/**
 * The token chain: environment variable → token file (mode exactly 0600) → command
 * (10 s deadline). No token is fine for local backends. Only the *source* is ever
 * shown; the value is registered with the redactor the moment it is read.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { helperWorkingDir, hostHelperEnv } from "../core/host-helper-env.js";
import { registerSecret } from "../core/redact.js";
import type { Config } from "./schema.js";
import { type CommandPlace, runTokenCommandOnce } from "./token-command.js";
import { tokenCommandFiles } from "./token-command-files.js";
import { untrustedFileProblem } from "./trusted-file.js";

export const TOKEN_CMD_TIMEOUT_MS = 10_000;
export const TOKEN_FILE_MODE = 0o600;
/** A token longer than this is certainly a mistake (a whole file pasted, say). */
const MAX_TOKEN_BYTES = 16 * 1024;

export type TokenSource = "env" | "file" | "cmd" | "none";

export interface TokenResolution {
  source: TokenSource;
  /** Human description of where it came from, with no value in it. */
  detail: string;
  token?: string;
  /** Set when a source exists but was refused (bad mode, failed command). */
  error?: string;
}

export function tokenFilePath(config: Config, home: string): string {
  return path.resolve(home, config.backend.api_key_file ?? "token");
}

export function resolveToken(
  config: Config,
  home: string,
  env: NodeJS.ProcessEnv,
  projectRoot: string = process.cwd(),
): TokenResolution {
  const envName = config.backend.api_key_env;
  const fromEnv = envName ? env[envName] : undefined;
  if (fromEnv) {
    registerSecret(fromEnv);
    return { source: "env", detail: `environment variable ${envName}`, token: fromEnv.trim() };
  }

  const file = tokenFilePath(config, home);
  const fileResult = readTokenFile(file);
  if (fileResult) return fileResult;

  const cmd = config.backend.api_key_cmd;
  if (cmd) {
    // What the command runs and reads is trusted as the configuration is.
    for (const f of tokenCommandFiles(cmd, os.homedir(), { scootHome: home, env })) {
      const untrusted = untrustedFileProblem(f, "file read by backend.api_key_cmd");
      if (untrusted) return { source: "cmd", detail: "backend.api_key_cmd", error: untrusted };
    }
    return runTokenCommand(cmd, {
      cwd: helperWorkingDir(home, projectRoot),
      env: hostHelperEnv(env, projectRoot),
    });
  }

  return { source: "none", detail: "no token (no Authorization header is sent)" };
}

function readTokenFile(file: string): TokenResolution | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return undefined;
  }
  const mode = st.mode & 0o777;
  if (!st.isFile()) {
    return {
      source: "file",
      detail: `token file ${file}`,
      error: `token file ${file} is not a regular file`,
    };
  }
  if (mode !== TOKEN_FILE_MODE) {
    return {
      source: "file",
      detail: `token file ${file}`,
      error: `token file ${file} has mode ${mode.toString(8).padStart(4, "0")}; it must be 0600 so only you can read it. Fix: chmod 600 ${file}`,
    };
  }
  const untrusted = untrustedFileProblem(file, "token file");
  if (untrusted) return { source: "file", detail: `token file ${file}`, error: untrusted };
  if (st.size > MAX_TOKEN_BYTES) {
    return {
      source: "file",
      detail: `token file ${file}`,
      error: `token file ${file} is larger than 16 KiB`,
    };
  }
  const token = fs.readFileSync(file, "utf8").trim();
  registerSecret(token);
  if (!token) return undefined;
  return { source: "file", detail: `token file ${file}`, token };
}

/**
 * The command runs once per process: `doctor`, `config` and the run share
 * the answer instead of paying the deadline twice, and a command with side effects (a
 * password manager prompt, a rate-limited API) is not asked again.
 */
const commandResults = new Map<string, TokenResolution>();

function runTokenCommand(cmd: string, place: CommandPlace): TokenResolution {
  const cached = commandResults.get(cmd);
  if (cached) return cached;
  const result = runTokenCommandUncached(cmd, place);
  commandResults.set(cmd, result);
  return result;
}

function runTokenCommandUncached(cmd: string, place: CommandPlace): TokenResolution {
  const detail = "backend.api_key_cmd";
  const r = runTokenCommandOnce(cmd, TOKEN_CMD_TIMEOUT_MS, MAX_TOKEN_BYTES, place);
  const out = (r.out ?? "").trim();
  registerSecret(out);
  if (!r.ok) return { source: "cmd", detail, error: r.error };
  if (!out) return { source: "cmd", detail, error: "backend.api_key_cmd printed nothing" };
  return { source: "cmd", detail, token: out };
}
