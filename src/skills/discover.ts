/**
 * Skill discovery: which directories are searched, in which order, and which skill wins
 * a name clash. Invalid skills are reported, never loaded; a shadowed skill is reported
 * so a user can see why their copy is not the one in use.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Config } from "../config/schema.js";
import { isInside } from "../core/inside.js";
import { credentialStorePaths, DEFAULT_HOME_NAME } from "../policy/protected-places.js";
import {
  type FrontMatterResult,
  readSkillFile,
  SKILL_FILE,
  type SkillMeta,
  type SkillProblem,
} from "./frontmatter.js";
import { isHidden, realpathOrUndefined } from "./fsutil.js";

/** Entries looked at per root; a mistaken extra path such as `/` must stay cheap. */
export const MAX_ENTRIES_PER_ROOT = 1000;

export type RootSource = "project" | "agents" | "home" | "extra";

export interface Skill {
  name: string;
  description: string;
  /** Realpath of the skill directory: the confinement boundary of the `skill` action. */
  dir: string;
  /** `<dir>/SKILL.md`. */
  file: string;
  meta: SkillMeta;
  source: RootSource;
}

export interface SkillRoot {
  /** Absolute path as configured (`~` expanded, relative resolved against cwd). */
  path: string;
  exists: boolean;
  source: RootSource;
  /** Opt-in roots are listed even when off, so `skills` can say how to turn them on. */
  enabled: boolean;
  /** Set when the same directory was already searched under another root entry. */
  duplicateOf?: string;
}

export interface ShadowedSkill {
  name: string;
  dir: string;
  /** Directory of the skill that won the name. */
  by: string;
}

export interface Discovery {
  /** False when `skills.enabled = false`: nothing is searched. */
  enabled: boolean;
  skills: Skill[];
  shadowed: ShadowedSkill[];
  problems: SkillProblem[];
  warnings: SkillProblem[];
  roots: SkillRoot[];
}

export interface DiscoverOptions {
  config: Pick<Config, "skills">;
  /** Project root (the process working directory). */
  cwd: string;
  /** The user's home directory, for `~/.agents/skills` and `~/` in extra paths. */
  homeDir: string;
  /** Resolved Scoot home (`--scoot-home` > `SCOOT_HOME` > `~/.scoot` > XDG state). */
  scootHome: string;
  /** Where the configuration lives, with the home's `skills/` (the home unless XDG is in use). */
  configDir?: string;
}

/** One skill directory as found on disk, valid or not. */
export interface ScannedSkill {
  dir: string;
  file: string;
  result: FrontMatterResult;
}

export interface RootScan {
  skills: ScannedSkill[];
  problems: SkillProblem[];
  warnings: SkillProblem[];
}

/** `~` and `~/x` expand to the home directory; other relative paths resolve against cwd. */
export function expandPath(p: string, cwd: string, homeDir: string): string {
  if (p === "~") return homeDir;
  if (p.startsWith("~/")) return path.join(homeDir, p.slice(2));
  return path.resolve(cwd, p);
}

/** The search roots in priority order (first wins on a name clash). */
export function skillRoots(opts: DiscoverOptions): SkillRoot[] {
  const s = opts.config.skills;
  const candidates: { path: string; source: RootSource; enabled: boolean }[] = [
    { path: path.join(opts.cwd, ".agents", "skills"), source: "project", enabled: s.include_project_skills },
    {
      path: path.join(opts.homeDir, ".agents", "skills"),
      source: "agents",
      enabled: s.include_agents_skills,
    },
    { path: path.join(opts.configDir ?? opts.scootHome, "skills"), source: "home", enabled: true },
    ...s.extra_paths
      .filter((p) => p.trim() !== "")
      .map((p) => ({ path: expandPath(p, opts.cwd, opts.homeDir), source: "extra" as const, enabled: true })),
  ];
  return candidates.map((c) => ({ ...c, exists: isDirectory(c.path) }));
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function hasSkillFile(dir: string): boolean {
  try {
    fs.lstatSync(path.join(dir, SKILL_FILE));
    return true;
  } catch {
    return false;
  }
}

/** Validates one skill directory (one that holds, or should hold, SKILL.md). */
export function scanSkillDir(dir: string): ScannedSkill {
  const real = realpathOrUndefined(dir) ?? path.resolve(dir);
  const file = path.join(real, SKILL_FILE);
  const realFile = realpathOrUndefined(file);
  if (realFile !== undefined && !isInside(realFile, real)) {
    // The `skill` action would refuse to read it, so the skill could never be used.
    return {
      dir: real,
      file,
      result: {
        ok: false,
        problems: [{ file, message: `${SKILL_FILE} is a symlink that resolves outside the skill directory` }],
        warnings: [],
      },
    };
  }
  return { dir: real, file, result: readSkillFile(file) };
}

/**
 * A root is either a single skill (it holds SKILL.md itself) or a directory of skill
 * directories. Hidden entries are skipped; a visible directory without SKILL.md is a
 * warning, because it is usually a skill whose file was misnamed.
 */
export function scanRoot(root: string): RootScan {
  const out: RootScan = { skills: [], problems: [], warnings: [] };
  if (!isDirectory(root)) return out;
  if (hasSkillFile(root)) {
    out.skills.push(scanSkillDir(root));
    return out;
  }
  let names: string[];
  try {
    names = fs.readdirSync(root).sort();
  } catch (e) {
    out.problems.push({
      file: root,
      message: `cannot read directory: ${(e as NodeJS.ErrnoException).code ?? e}`,
    });
    return out;
  }
  if (names.length > MAX_ENTRIES_PER_ROOT) {
    out.warnings.push({
      file: root,
      message: `${names.length} entries; only the first ${MAX_ENTRIES_PER_ROOT} were searched`,
    });
    names = names.slice(0, MAX_ENTRIES_PER_ROOT);
  }
  for (const name of names) {
    if (isHidden(name)) continue;
    const dir = path.join(root, name);
    if (!isDirectory(dir)) continue;
    if (!hasSkillFile(dir)) {
      out.warnings.push({ file: dir, message: `no ${SKILL_FILE}; not a skill` });
      continue;
    }
    out.skills.push(scanSkillDir(dir));
  }
  return out;
}

/**
 * Why a skill folder may not be loaded, or undefined. A loaded skill's folder becomes readable
 * to the file tools and visible inside the sandbox even where the gate otherwise refuses, so a
 * folder that is or contains the project root, Scoot's home, the user's home or a credential
 * store (`~/SKILL.md` plus a link to `~`) would open every protected place below it; one inside
 * a credential store or inside Scoot's home outside its `skills/` would open that place.
 */
export function unsafeSkillDir(dir: string, opts: DiscoverOptions): string | undefined {
  const real = realpathOrUndefined(dir) ?? path.resolve(dir);
  const real2 = (p: string) => realpathOrUndefined(p) ?? path.resolve(p);
  const homes = [
    opts.scootHome,
    ...(opts.configDir && opts.configDir !== opts.scootHome ? [opts.configDir] : []),
    path.join(opts.homeDir, DEFAULT_HOME_NAME),
  ].map(real2);
  const named: [string, string][] = [
    [real2(opts.cwd), "the project root"],
    [real2(opts.homeDir), "the user's home"],
    ...homes.map((h): [string, string] => [h, "Scoot's home"]),
    ...credentialStorePaths(opts.homeDir).map((p): [string, string] => [real2(p), "a credential store"]),
  ];
  for (const [place, what] of named) {
    if (isInside(place, real)) return `it is or contains ${what} (${place})`;
  }
  for (const p of credentialStorePaths(opts.homeDir)) {
    if (isInside(real, real2(p))) return `it lies inside a credential store (${real2(p)})`;
  }
  for (const h of homes) {
    if (isInside(real, h) && !isInside(real, path.join(h, "skills"))) {
      return `it lies inside Scoot's home outside its skills/ folder (${h})`;
    }
  }
  return undefined;
}

/** Finds every skill in the configured roots. Pure apart from reading the filesystem. */
export function discoverSkills(opts: DiscoverOptions): Discovery {
  const found: Discovery = { enabled: true, skills: [], shadowed: [], problems: [], warnings: [], roots: [] };
  if (!opts.config.skills.enabled) return { ...found, enabled: false };
  found.roots = skillRoots(opts);
  const byName = new Map<string, Skill>();
  const searched = new Map<string, string>();
  for (const root of found.roots) {
    if (!root.enabled || !root.exists) continue;
    const real = realpathOrUndefined(root.path) ?? root.path;
    const earlier = searched.get(real);
    if (earlier !== undefined) {
      // Searching a directory twice would report each of its skills as shadowing itself.
      root.duplicateOf = earlier;
      continue;
    }
    searched.set(real, root.path);
    const scan = scanRoot(root.path);
    found.problems.push(...scan.problems);
    found.warnings.push(...scan.warnings);
    for (const s of scan.skills) {
      found.warnings.push(...s.result.warnings);
      if (!s.result.ok) {
        found.problems.push(...s.result.problems);
        continue;
      }
      const unsafe = unsafeSkillDir(s.dir, opts);
      if (unsafe) {
        found.problems.push({
          file: s.file,
          message: `skill folder refused: ${unsafe}; a skill's files would become readable there. Fix: keep each skill in a folder of its own`,
        });
        continue;
      }
      const meta = s.result.meta;
      const winner = byName.get(meta.name);
      if (winner) {
        found.shadowed.push({ name: meta.name, dir: s.dir, by: winner.dir });
        continue;
      }
      const skill: Skill = {
        name: meta.name,
        description: meta.description,
        dir: s.dir,
        file: s.file,
        meta,
        source: root.source,
      };
      byName.set(meta.name, skill);
      found.skills.push(skill);
    }
  }
  return found;
}
