/**
 * The global `--model`, `--base-url` and `--api` flags (docs/keyboard.md "Choosing the backend for one
 * run"): they override backend.* and SCOOT_BACKEND_* for every command that loads the
 * configuration — `-e`, the REPL, `serve`, `acp`, `doctor`, `config`. A bad value is a
 * usage error, never a silent fallback.
 */
import { checkBaseUrl } from "../config/base-url.js";
import type { Config } from "../config/schema.js";
import type { Result } from "../core/types.js";
import { flagString, type ParsedArgs } from "./args.js";

const APIS = ["chat", "responses"] as const;

export function applyBackendFlags(config: Config, args: ParsedArgs): Result<void> {
  // `--model` alone is doctor's model check (doctor takes it out before this); anywhere else it needs its name.
  if (args.flags.model === true)
    return { ok: false, error: "--model needs a model name, e.g. --model qwen2.5" };
  const model = flagString(args, "model");
  const baseUrl = flagString(args, "base-url");
  const api = flagString(args, "api");
  if (model !== undefined) {
    if (model.trim() === "") return { ok: false, error: "--model needs a model name, e.g. --model qwen2.5" };
    config.backend.model = model;
  }
  if (baseUrl !== undefined) {
    const checked = checkBaseUrl(baseUrl);
    if (!checked.ok) return { ok: false, error: `--base-url: ${checked.error}` };
    config.backend.base_url = checked.value;
  }
  if (api !== undefined) {
    if (!(APIS as readonly string[]).includes(api))
      return { ok: false, error: `--api "${api}" is not one of ${APIS.join(", ")}` };
    config.backend.api = api as Config["backend"]["api"];
  }
  return { ok: true, value: undefined };
}
