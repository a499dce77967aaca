/**
 * `skill`: read a file from a loaded skill's directory. It is a native capability that
 * bypasses the policy mode by design (skills work under readonly), so its safety lives
 * here: the name must be loaded, the path must be relative without `..`, and the
 * realpath of the target must stay inside the skill directory's realpath.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { clip } from "../core/clip.js";
import { isInside } from "../core/inside.js";
import type { Effects } from "../core/types.js";
import { secretLikeName } from "../policy/paths.js";
import { isHidden, listSkillFiles, readRegularFile, realpathOrUndefined } from "../skills/fsutil.js";
import type { SkillRegistry } from "../skills/registry.js";
import { CLIP } from "./clip.js";
import { declareInput, type InputOf, str, strOr } from "./declare.js";
import { done, failed, stoppedBy } from "./result.js";
import type { Presentation, Tool, ToolContext, ToolResult } from "./types.js";

/** Largest file the action reads; the observation is clipped far below this anyway. */
export const MAX_SKILL_READ_BYTES = 1024 * 1024;
/** Files named when a path is a directory or missing. */
export const MAX_LISTED_FILES = 200;
const MAX_LIST_DEPTH = 8;
const DEFAULT_PATH = "SKILL.md";
/** Every failure observation starts with this, like the other tools' errors. */
export const ERROR_PREFIX = "skill error:";

/** The one declaration: `path` absent, `null` or blank means SKILL.md; the path checks are its refinement. */
export const INPUT = declareInput(
  "skill",
  { name: str('"..."', { example: '"<skill>"' }), path: strOr(DEFAULT_PATH) },
  (i) => {
    const bad = checkRelativePath(i.path);
    if (bad) return { ok: false, error: bad };
    return { ok: true, value: { name: i.name.trim(), path: i.path } };
  },
);

export type SkillInput = InputOf<typeof INPUT.fields>;

/** Refuses what could name a file outside the skill before any filesystem access. */
function checkRelativePath(p: string): string | undefined {
  if (p.includes("\0")) return 'skill: "path" must not contain NUL';
  if (path.isAbsolute(p) || path.win32.isAbsolute(p)) {
    return `skill: "path" must be relative to the skill directory, got absolute ${JSON.stringify(p)}`;
  }
  if (p.split(/[\\/]/).includes("..")) return 'skill: "path" must not contain `..` segments';
  return undefined;
}

/** Why a relative path inside a skill is private, or undefined. */
function privateName(rel: string): string | undefined {
  const segs = rel.split(/[\\/]+/).filter((s) => s !== "" && s !== ".");
  const hidden = segs.find(isHidden);
  if (hidden) return `${JSON.stringify(hidden)} is hidden`;
  const secret = secretLikeName(rel);
  return secret ? `${JSON.stringify(secret)} looks like a secret` : undefined;
}

function effects(_input: SkillInput): Effects {
  return { capability: "native" };
}

function present(input: SkillInput): Presentation {
  const file = input.path !== DEFAULT_PATH ? `/${input.path}` : "";
  return { title: `Open skill ${input.name}${file}`, keyArgument: `${input.name}${file}`, locations: [] };
}

function fileList(dir: string): string {
  const listed = listSkillFiles(dir, MAX_LISTED_FILES, MAX_LIST_DEPTH);
  const files = listed.files.filter((f) => secretLikeName(f) === undefined);
  const truncated = listed.truncated;
  if (files.length === 0) return "(no files)";
  return files.join(", ") + (truncated ? ", ..." : "");
}

function availableSkills(registry: SkillRegistry | undefined): string {
  const names = (registry?.list() ?? []).map((s) => s.name).sort();
  return names.length === 0 ? "no skills are loaded" : `available skills: ${names.join(", ")}`;
}

/** The run attaches the registry as `unknown`; anything without the two methods counts as none. */
function asRegistry(v: unknown): SkillRegistry | undefined {
  const r = v as Partial<SkillRegistry> | undefined;
  return r && typeof r.get === "function" && typeof r.list === "function" ? (r as SkillRegistry) : undefined;
}

async function run(input: SkillInput, ctx: ToolContext): Promise<ToolResult> {
  if (ctx.signal.aborted) return failed(`${ERROR_PREFIX} read aborted`, stoppedBy(ctx.signal));
  const registry = asRegistry(ctx.services.skills);
  const skill = registry?.get(input.name);
  if (!skill)
    return failed(
      `${ERROR_PREFIX} unknown skill ${JSON.stringify(input.name)}; ${availableSkills(registry)}`,
    );

  // Re-resolve the boundary now: the directory may have been replaced since discovery.
  const root = realpathOrUndefined(skill.dir);
  if (root === undefined)
    return failed(`${ERROR_PREFIX} skill ${JSON.stringify(skill.name)} directory is gone: ${skill.dir}`);
  const shown = input.path.split(path.sep).join("/");
  const writtenPrivate = privateName(input.path);
  const target = realpathOrUndefined(path.join(root, input.path));
  if (target === undefined && writtenPrivate) {
    return failed(
      `${ERROR_PREFIX} ${JSON.stringify(shown)} in skill ${JSON.stringify(skill.name)} is refused: ${writtenPrivate}`,
    );
  }
  if (target === undefined) {
    return failed(
      `${ERROR_PREFIX} no file ${JSON.stringify(shown)} in skill ${JSON.stringify(skill.name)}; its files: ${fileList(root)}`,
    );
  }
  if (!isInside(target, root)) {
    return failed(
      `${ERROR_PREFIX} ${JSON.stringify(shown)} resolves outside skill ${JSON.stringify(skill.name)}; refused`,
    );
  }
  // Hidden and secret-named files are never part of a skill's surface, in any policy mode
  //: checked on the path as written and on where it resolves to.
  const refused = writtenPrivate ?? privateName(path.relative(root, target));
  if (refused) {
    return failed(
      `${ERROR_PREFIX} ${JSON.stringify(shown)} in skill ${JSON.stringify(skill.name)} is refused: ${refused}`,
    );
  }
  let isDir = false;
  try {
    isDir = fs.statSync(target).isDirectory();
  } catch {
    // readRegularFile below reports the problem.
  }
  if (isDir) {
    return failed(
      `${ERROR_PREFIX} ${JSON.stringify(shown)} is a directory in skill ${JSON.stringify(skill.name)}; its files: ${fileList(root)}`,
    );
  }
  const read = readRegularFile(target, MAX_SKILL_READ_BYTES, { singleLink: true });
  if (!read.ok)
    return failed(
      `${ERROR_PREFIX} ${JSON.stringify(shown)} in skill ${JSON.stringify(skill.name)} ${read.error}`,
    );
  if (read.data.includes(0)) {
    return failed(`[skill ${skill.name}: ${shown}] binary file, ${read.data.length} bytes; not shown`);
  }
  // The directory lets the model run a script the skill bundles, with bash, under the policy
  // (docs/skills.md "Skills"): the skill's own files name paths relative to it.
  const header = `[skill ${skill.name}: ${shown}, ${read.data.length} bytes; skill directory: ${skill.dir}]\n`;
  return done(clip(header + read.data.toString("utf8"), CLIP.skill));
}

export const skillTool: Tool<SkillInput> = {
  name: "skill",
  describe:
    "Read a file from a loaded skill's directory (default SKILL.md; other files by relative path). " +
    "Read-only, works in every policy mode; skills add instructions, never privileges.",
  inputShape: INPUT.inputShape,
  inputFields: INPUT.names,
  clipBytes: CLIP.skill,
  // Offered only when skills are loaded.
  enabledWhen: (run) => run.hasSkills,
  parse: INPUT.parse,
  effects,
  present,
  run,
};
