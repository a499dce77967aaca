/**
 * Policy modes and their privilege lattice (docs/safety.md "Policy modes", "Unattended operation").
 *
 * readonly < guarded < unrestricted. `--unattended` runs may never exceed the
 * configured ceiling (`edge.max_job_policy`) and never run `guarded`: a job nobody
 * watches gets `readonly` unless an operator explicitly chose `unrestricted`.
 */
import type { PolicyMode } from "../config/schema.js";

/** Privilege rank of each mode: higher allows more. */
export const PRIVILEGE: Readonly<Record<PolicyMode, number>> = { readonly: 0, guarded: 1, unrestricted: 2 };

/** Accepted spellings (after trim + lower-case). `yolo` is the documented alias of `unrestricted`. */
const MODE_NAMES: Readonly<Record<string, PolicyMode>> = {
  readonly: "readonly",
  guarded: "guarded",
  unrestricted: "unrestricted",
  yolo: "unrestricted",
};

/**
 * Parses a mode name, case-insensitively and trimmed. Unknown input (including non-strings)
 * gives undefined: the caller decides whether that is a usage error (CLI), `readonly` with a
 * warning (file, job), or an ignored override (environment) — never a looser mode.
 */
export function parsePolicyMode(s: unknown): PolicyMode | undefined {
  if (typeof s !== "string") return undefined;
  const key = s.trim().toLowerCase();
  return Object.hasOwn(MODE_NAMES, key) ? MODE_NAMES[key] : undefined;
}

/** True when `a` grants strictly less than `b`. */
export function lessPrivileged(a: PolicyMode, b: PolicyMode): boolean {
  return PRIVILEGE[a] < PRIVILEGE[b];
}

/** The less privileged of two modes. */
export function privilegeMin(a: PolicyMode, b: PolicyMode): PolicyMode {
  return PRIVILEGE[a] <= PRIVILEGE[b] ? a : b;
}

/** Unattended work never runs `guarded`: its screening assumes someone reads the trace. */
export function correctUnattended(m: PolicyMode): PolicyMode {
  return m === "guarded" ? "readonly" : m;
}

/** Effective mode of an `--unattended` run: the requested mode capped by the ceiling, then corrected. */
export function effectiveUnattended(requested: PolicyMode, ceiling: PolicyMode): PolicyMode {
  return correctUnattended(privilegeMin(requested, ceiling));
}
