/**
 * What an editor chose for a session (docs/editors.md "Editors (ACP)"): a sidecar
 * `<id>.settings.json` beside the transcript holds the session's mode (a policy mode, or `plan`
 * with the policy mode its approved plans run in), its model, the
 * approval choices made "always", the project root, and the fingerprints of its failed tool
 * calls (so a reload shows them failed, src/acp/call-outcomes.ts). It is written when an ACP session is created
 * (so a session never prompted can still be loaded) and replaced whole, atomically, on every
 * change; `session/load` restores from it. A sidecar that is not ours (too large, not an
 * object, unknown mode) is ignored field by field, never trusted: a mode read from it still
 * passes the same ceiling as one an editor asks for.
 */
import path from "node:path";
import { atomicWriteFile } from "../core/atomic-write.js";
import { readHomeFile } from "../core/safe-open.js";
import type { Result } from "../core/types.js";

/** A sidecar larger than this is not ours: it is ignored. */
const MAX_SETTINGS_BYTES = 64 * 1024;
/** Remembered "always" answers kept per session; beyond it the oldest go. */
export const MAX_REMEMBERED_APPROVALS = 256;

export interface SessionSettings {
  /** A policy mode, or `plan` (ACP's plan mode: then `plan_policy` is the mode a plan runs in). */
  mode?: string;
  /** In plan mode: the policy mode an approved plan runs in. */
  plan_policy?: string;
  /** The approval keys answered "always" (one per tool, or per program for bash). */
  approvals?: string[];
  /** The approval keys answered "reject always": refused without asking again. */
  refusals?: string[];
  project_root?: string;
  /** The model the editor chose for the session; absent: the configured one. */
  model?: string;
  /** Fingerprints of the observations of tool calls that failed (newest last). */
  failed_calls?: string[];
}

/** Fingerprints kept per session; beyond it the oldest go. */
export const MAX_FAILED_CALL_PRINTS = 512;
const FINGERPRINT = /^[0-9a-f]{8,64}$/;

export function settingsPath(sessionsDir: string, id: string): string {
  return path.join(sessionsDir, `${id}.settings.json`);
}

export function readSessionSettings(sessionsDir: string, id: string): SessionSettings | undefined {
  const file = settingsPath(sessionsDir, id);
  // No-follow, non-blocking, regular and bounded, checked on the opened descriptor.
  const read = readHomeFile(file, { maxBytes: MAX_SETTINGS_BYTES, noFollow: true });
  if (!read.ok) return undefined;
  const raw = read.text;
  let v: Record<string, unknown>;
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
    v = parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const out: SessionSettings = {};
  if (typeof v.mode === "string") out.mode = v.mode;
  if (typeof v.plan_policy === "string") out.plan_policy = v.plan_policy;
  if (typeof v.project_root === "string") out.project_root = v.project_root;
  if (typeof v.model === "string" && v.model !== "") out.model = v.model;
  if (Array.isArray(v.failed_calls))
    out.failed_calls = v.failed_calls
      .filter((a): a is string => typeof a === "string" && FINGERPRINT.test(a))
      .slice(-MAX_FAILED_CALL_PRINTS);
  for (const key of ["approvals", "refusals"] as const) {
    const list = v[key];
    if (Array.isArray(list))
      out[key] = list.filter((a): a is string => typeof a === "string").slice(-MAX_REMEMBERED_APPROVALS);
  }
  return out;
}

/** Replaces the sidecar with `settings` (0600); the old one stays whole if the write fails. */
export function writeSessionSettings(
  sessionsDir: string,
  id: string,
  settings: SessionSettings,
): Result<void> {
  const body: SessionSettings = {
    ...settings,
    ...(settings.approvals ? { approvals: settings.approvals.slice(-MAX_REMEMBERED_APPROVALS) } : {}),
    ...(settings.refusals ? { refusals: settings.refusals.slice(-MAX_REMEMBERED_APPROVALS) } : {}),
    ...(settings.failed_calls ? { failed_calls: settings.failed_calls.slice(-MAX_FAILED_CALL_PRINTS) } : {}),
  };
  const file = settingsPath(sessionsDir, id);
  const r = atomicWriteFile(file, `${JSON.stringify(body)}\n`, { mode: 0o600 });
  if (!r.ok) return { ok: false, error: `cannot record the session's settings in ${file}: ${r.error}` };
  return { ok: true, value: undefined };
}
