/**
 * `skills check [dir]`: validate skills without running anything from them. With a
 * directory, it is either one skill (holds SKILL.md) or a root of skills; without one,
 * every enabled search root is checked in search order.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { type CommandOutput, lines } from "./command.js";
import { type DiscoverOptions, type RootScan, scanRoot, skillRoots } from "./discover.js";
import { formatProblem, type SkillMeta, specNameProblems } from "./frontmatter.js";
import { realpathOrUndefined } from "./fsutil.js";

interface Tally {
  out: string[];
  err: string[];
  ok: number;
  invalid: number;
  /** name → directory of the first valid skill with that name. */
  seen: Map<string, string>;
}

const SHOWN_CHARS = 120;

function shown(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > SHOWN_CHARS ? `${one.slice(0, SHOWN_CHARS - 1)}…` : one;
}

/** The open-standard fields a skill declares, one indented line each (docs/skills.md "Skills"). */
function standardFields(meta: SkillMeta): string[] {
  const out: string[] = [];
  if (meta.license !== undefined) out.push(`  license: ${shown(meta.license)}`);
  if (meta.compatibility !== undefined) out.push(`  compatibility: ${shown(meta.compatibility)}`);
  if (meta.metadata !== undefined) {
    const pairs = Object.entries(meta.metadata).map(([k, v]) => `${k}=${v}`);
    if (pairs.length > 0) out.push(`  metadata: ${shown(pairs.join(", "))}`);
  }
  if (meta.allowed_tools !== undefined && meta.allowed_tools.length > 0) {
    out.push(`  allowed-tools: ${shown(meta.allowed_tools.join(" "))} (review only: grants nothing)`);
  }
  return out;
}

function report(scan: RootScan, t: Tally): void {
  for (const p of scan.problems) {
    t.out.push(`INVALID ${formatProblem(p)}`);
    t.invalid++;
  }
  for (const w of scan.warnings) t.err.push(`WARN ${formatProblem(w)}`);
  for (const s of scan.skills) {
    for (const w of s.result.warnings) t.err.push(`WARN ${formatProblem(w)}`);
    if (!s.result.ok) {
      for (const p of s.result.problems) t.out.push(`INVALID ${formatProblem(p)}`);
      t.invalid++;
      continue;
    }
    const name = s.result.meta.name;
    const nameProblems = specNameProblems(name, path.basename(s.dir));
    if (nameProblems.length > 0) {
      for (const message of nameProblems) t.out.push(`INVALID ${formatProblem({ file: s.file, message })}`);
      t.invalid++;
      continue;
    }
    const winner = t.seen.get(name);
    if (winner === undefined) t.seen.set(name, s.dir);
    t.out.push(`OK ${name}  ${s.dir}${winner === undefined ? "" : `  (shadowed by ${winner})`}`);
    t.out.push(...standardFields(s.result.meta));
    t.ok++;
  }
}

function summary(t: Tally, where: string): CommandOutput {
  const total = t.ok + t.invalid;
  if (total === 0) t.out.push(`no skills found in ${where}`);
  else t.out.push(`${t.ok} ok, ${t.invalid} invalid`);
  return { stdout: lines(t.out), stderr: lines(t.err), exitCode: t.invalid > 0 ? 1 : 0 };
}

export function runSkillsCheck(dir: string | undefined, opts: DiscoverOptions): CommandOutput {
  const t: Tally = { out: [], err: [], ok: 0, invalid: 0, seen: new Map() };
  if (dir !== undefined) {
    const abs = path.resolve(opts.cwd, dir);
    let st: fs.Stats;
    try {
      st = fs.statSync(abs);
    } catch {
      return { stdout: "", stderr: lines([`skills check: no such directory: ${abs}`]), exitCode: 2 };
    }
    if (!st.isDirectory()) {
      return { stdout: "", stderr: lines([`skills check: not a directory: ${abs}`]), exitCode: 2 };
    }
    report(scanRoot(abs), t);
    return summary(t, abs);
  }

  if (!opts.config.skills.enabled) {
    return {
      stdout: lines(["skills are disabled (skills.enabled = false); nothing to check"]),
      stderr: "",
      exitCode: 0,
    };
  }
  const searched = new Set<string>();
  const checked: string[] = [];
  for (const root of skillRoots(opts)) {
    if (!root.enabled || !root.exists) continue;
    const real = realpathOrUndefined(root.path) ?? root.path;
    if (searched.has(real)) continue;
    searched.add(real);
    checked.push(root.path);
    report(scanRoot(root.path), t);
  }
  return summary(t, checked.length === 0 ? "any search root (none exists)" : checked.join(", "));
}
