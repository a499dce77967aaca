/**
 * What an editor chose for a session (docs/editors.md "Editors (ACP)"): a sidecar
 * `<id>.settings.json` beside the transcript holds the session's mode (a policy mode, or `plan`
 * with the policy mode its approved plans run in), its model, the
 * approval choices made "always" (each under the project they were given in), the project root,
 * and the fingerprints of its failed tool
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
import { projectRoot } from "./session-meta.js";

/** A sidecar larger than this is not ours: it is ignored. */
const MAX_SETTINGS_BYTES = 64 * 1024;
/** Remembered "always" answers kept per session and project; beyond it the oldest go. */
export const MAX_REMEMBERED_APPROVALS = 256;
/** Projects a session keeps answers for; beyond it the one used longest ago goes. */
export const MAX_REMEMBERED_PROJECTS = 8;

/**
 * The "always" answers given in one project (docs/editors.md "Approval in the editor"): an answer
 * names a scope relative to the project root (`file_write:notes.txt`), so it holds there alone.
 */
export interface ProjectAnswers {
  /** The project root, resolved (symlinks followed), the answers were given in. */
  project_root: string;
  approvals: string[];
  refusals: string[];
}

export interface SessionSettings {
  /** A policy mode, or `plan` (ACP's plan mode: then `plan_policy` is the mode a plan runs in). */
  mode?: string;
  /** In plan mode: the policy mode an approved plan runs in. */
  plan_policy?: string;
  /** The "always" and "reject always" answers, by the project they were given in (newest last). */
  remembered?: ProjectAnswers[];
  /**
   * An older sidecar's "always" answers, with no project of their own: held to `project_root`
   * (see `rememberedIn`); ACP sessions now write `remembered` instead.
   */
  approvals?: string[];
  /** An older sidecar's "reject always" answers, likewise. */
  refusals?: string[];
  /** The directory the session last ran in, as the editor named it (`session/list` shows it). */
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
    const list = stringList(v[key]);
    if (list) out[key] = list;
  }
  if (Array.isArray(v.remembered)) {
    const remembered: ProjectAnswers[] = [];
    for (const e of v.remembered) {
      if (typeof e !== "object" || e === null) continue;
      const entry = e as Record<string, unknown>;
      const root = entry.project_root;
      if (typeof root !== "string" || !path.isAbsolute(root)) continue;
      remembered.push({
        project_root: root,
        approvals: stringList(entry.approvals) ?? [],
        refusals: stringList(entry.refusals) ?? [],
      });
    }
    out.remembered = remembered.slice(-MAX_REMEMBERED_PROJECTS);
  }
  return out;
}

function stringList(list: unknown): string[] | undefined {
  if (!Array.isArray(list)) return undefined;
  return list.filter((a): a is string => typeof a === "string").slice(-MAX_REMEMBERED_APPROVALS);
}

/**
 * The answers that hold in the project at `root` (resolved), and those of other projects (kept
 * as they are). A sidecar written before answers had a project has them in `approvals` and
 * `refusals`: they belong to the project the session was recorded in (`project_root`, resolved
 * now), and with none recorded they are dropped. Once `remembered` is there the older lists
 * are not read.
 */
export function rememberedIn(
  settings: SessionSettings | undefined,
  root: string,
): { here: ProjectAnswers; others: ProjectAnswers[] } {
  let all = settings?.remembered;
  if (all === undefined && settings?.project_root !== undefined && path.isAbsolute(settings.project_root)) {
    const legacy = { approvals: settings.approvals ?? [], refusals: settings.refusals ?? [] };
    all =
      legacy.approvals.length + legacy.refusals.length > 0
        ? [{ project_root: projectRoot(settings.project_root), ...legacy }]
        : [];
  }
  const mine = (all ?? []).filter((e) => e.project_root === root);
  const here: ProjectAnswers = {
    project_root: root,
    approvals: [...new Set(mine.flatMap((e) => e.approvals))],
    refusals: [...new Set(mine.flatMap((e) => e.refusals))],
  };
  return { here, others: (all ?? []).filter((e) => e.project_root !== root) };
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
    ...(settings.remembered
      ? {
          remembered: settings.remembered
            .filter((e) => e.approvals.length + e.refusals.length > 0)
            .slice(-MAX_REMEMBERED_PROJECTS)
            .map((e) => ({
              project_root: e.project_root,
              approvals: e.approvals.slice(-MAX_REMEMBERED_APPROVALS),
              refusals: e.refusals.slice(-MAX_REMEMBERED_APPROVALS),
            })),
        }
      : {}),
    ...(settings.failed_calls ? { failed_calls: settings.failed_calls.slice(-MAX_FAILED_CALL_PRINTS) } : {}),
  };
  // A sidecar too large to read back would lose everything in it: other projects' answers go
  // first (the one used longest ago first), then this project's oldest.
  const kept = body.remembered;
  const tooLarge = () => Buffer.byteLength(JSON.stringify(body)) >= MAX_SETTINGS_BYTES;
  while (kept && kept.length > 1 && tooLarge()) kept.shift();
  const last = kept?.[0];
  while (last && last.approvals.length + last.refusals.length > 0 && tooLarge()) {
    // An eighth of the longer list at a time: a few rounds, not one per answer.
    const list = last.approvals.length >= last.refusals.length ? last.approvals : last.refusals;
    list.splice(0, Math.ceil(list.length / 8));
  }
  const file = settingsPath(sessionsDir, id);
  const r = atomicWriteFile(file, `${JSON.stringify(body)}\n`, { mode: 0o600 });
  if (!r.ok) return { ok: false, error: `cannot record the session's settings in ${file}: ${r.error}` };
  return { ok: true, value: undefined };
}
