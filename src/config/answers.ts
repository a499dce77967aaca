/**
 * Checks of typed text — a `scoot setup` flag value or an answer on the terminal — for the keys
 * setup asks about. Stricter than the loader's type check: setup refuses what would load but
 * could not be meant (a URL with credentials, a command with a token in it). Each check is
 * attached to its key in `config/schema.ts`; the messages say what is wrong and how to fix it.
 */

import { redact } from "../core/redact.js";
import type { Result } from "../core/types.js";
import { checkBaseUrl } from "./base-url.js";
import { normalisePolicy } from "./declare.js";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Control characters are never meaningful in these values and would not survive TOML. */
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

export type TokenSourceChoice = "env" | "file" | "cmd" | "none";
export const TOKEN_SOURCES: readonly TokenSourceChoice[] = ["env", "file", "cmd", "none"];

export function validateBaseUrl(text: string): Result<string> {
  const checked = checkBaseUrl(text);
  if (!checked.ok) return checked;
  const v = checked.value;
  const url = new URL(v);
  if (url.username || url.password) {
    return {
      ok: false,
      error: "the base URL must not carry credentials (user:password@); use a token source instead",
    };
  }
  if (redact(v) !== v) {
    return { ok: false, error: "the base URL appears to contain a credential; use a token source instead" };
  }
  return { ok: true, value: v };
}

export function validateModel(text: string): Result<string> {
  const v = text.trim();
  if (v === "") return { ok: false, error: "the model name is empty" };
  if (CONTROL_CHARS.test(v)) return { ok: false, error: "the model name contains control characters" };
  return { ok: true, value: v };
}

/** One of `values`, trimmed and case-insensitive; `what` names the value in the message. */
export function choiceOf<V extends string>(what: string, values: readonly V[]): (text: string) => Result<V> {
  const listed =
    values.length > 1 ? `${values.slice(0, -1).join(", ")} or ${values[values.length - 1]}` : values.join("");
  return (text) => {
    const v = text.trim().toLowerCase();
    return (values as readonly string[]).includes(v)
      ? { ok: true, value: v as V }
      : { ok: false, error: `unknown ${what} "${text}" (use ${listed})` };
  };
}

export function validatePolicy(text: string): Result<"readonly" | "guarded" | "unrestricted"> {
  const m = normalisePolicy(text);
  return m
    ? { ok: true, value: m }
    : { ok: false, error: `unknown policy "${text}" (use readonly, guarded, unrestricted or yolo)` };
}

export const validateTokenSource = choiceOf("token source", TOKEN_SOURCES);

export function validateEnvName(text: string): Result<string> {
  const v = text.trim();
  return ENV_NAME.test(v)
    ? { ok: true, value: v }
    : {
        ok: false,
        error: `"${text}" is not an environment variable name (letters, digits, _; not starting with a digit)`,
      };
}

export function validateTokenCmd(text: string): Result<string> {
  const v = text.trim();
  if (v === "") return { ok: false, error: "the token command is empty" };
  if (CONTROL_CHARS.test(v)) return { ok: false, error: "the token command contains control characters" };
  // The config must never hold a token, not even inside a command like `echo sk-...`.
  if (redact(v) !== v) {
    return {
      ok: false,
      error:
        "the token command appears to contain a credential itself; use a command that fetches it (e.g. pass show openai)",
    };
  }
  return { ok: true, value: v };
}
