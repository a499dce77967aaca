/**
 * SKILL.md front matter: the only thing Scoot reads from a skill before the model asks
 * for it. Parsing is deliberately narrow — plain YAML scalars and lists, no tags, a
 * small alias budget — because a skill is someone else's text landing in the prompt.
 */
import type { LineCounter, parseDocument } from "yaml";
import { lazyRequire } from "../core/lazy.js";
import { readRegularFile } from "./fsutil.js";

/** SKILL.md larger than this is refused: instructions, not a data dump. */
export const MAX_SKILL_MD_BYTES = 256 * 1024;
/** Aliases expanded while converting the YAML; a billion-laughs document trips this. */
export const MAX_YAML_ALIASES = 16;
/**
 * The open Agent Skills standard's limit (agentskills.io). Longer descriptions still load,
 * with a warning: the prompt clips every description anyway (skills/prompt.ts).
 */
export const MAX_DESCRIPTION_CHARS = 1024;
/** The standard's limit for `compatibility`; longer text loads with a warning. */
export const MAX_COMPATIBILITY_CHARS = 500;

export const SKILL_NAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
export const SKILL_FILE = "SKILL.md";

/** The YAML parser costs ~80 ms to load: only sessions that have skills pay for it. */
const yaml = lazyRequire<typeof import("yaml")>("yaml");

/**
 * Scoot's own keys plus the open Agent Skills standard's (docs/skills.md "Skills"):
 * `license`, `compatibility`, `metadata` and `allowed-tools`. None grants anything.
 */
const KNOWN_KEYS = new Set([
  "name",
  "description",
  "capabilities",
  "allowed_tools",
  "scope",
  "license",
  "compatibility",
  "metadata",
  "allowed-tools",
]);
/** Keys some skill formats use to pin a host version; Scoot refuses them outright. */
const VERSION_GATE_KEYS = ["scoot_version", "requires_scoot"];

export interface SkillMeta {
  name: string;
  description: string;
  capabilities?: string[];
  /**
   * Review-only: shown to people, never consulted by the policy gate. Scoot's `allowed_tools`
   * list and the standard's `allowed-tools` (space-separated string, or a list) both land here.
   */
  allowed_tools?: string[];
  scope?: string;
  /** Open-standard fields, recognised and shown by `skills check`; informational only. */
  license?: string;
  compatibility?: string;
  metadata?: Record<string, string>;
}

/** The Agent Skills specification's longest name. */
export const SPEC_NAME_MAX_CHARS = 64;

/**
 * Where a name breaks the Agent Skills specification's rules for `name` (in its words: 1-64
 * characters, lowercase alphanumeric characters and hyphens only, not starting or ending with a
 * hyphen, no consecutive hyphens, matching the parent directory name). Scoot loads the looser
 * SKILL_NAME_PATTERN; `skills check` holds a skill to these (docs/skills.md "Skills").
 */
export function specNameProblems(name: string, folder: string): string[] {
  const out: string[] = [];
  const say = (rule: string) =>
    out.push(`\`name\` ${JSON.stringify(name)} ${rule} (Agent Skills specification)`);
  if (name.length < 1 || name.length > SPEC_NAME_MAX_CHARS)
    say(`must be 1-${SPEC_NAME_MAX_CHARS} characters; it has ${name.length}`);
  const others = [...new Set(name.replace(/[a-z0-9-]/g, ""))];
  if (others.length > 0)
    say(
      `may only contain lowercase alphanumeric characters and hyphens (a-z, 0-9 and -); it has ${others.map((c) => JSON.stringify(c)).join(", ")}`,
    );
  if (name.startsWith("-") || name.endsWith("-")) say("must not start or end with a hyphen (-)");
  if (name.includes("--")) say("must not contain consecutive hyphens (--)");
  if (name !== folder) say(`must match the parent directory name ${JSON.stringify(folder)}`);
  return out;
}

export interface SkillProblem {
  file: string;
  line?: number;
  message: string;
}

export type FrontMatterResult =
  | { ok: true; meta: SkillMeta; body: string; warnings: SkillProblem[] }
  | { ok: false; problems: SkillProblem[]; warnings: SkillProblem[] };

/** `file:line: message`, or `file: message` when the line is unknown. */
export function formatProblem(p: SkillProblem): string {
  return p.line === undefined ? `${p.file}: ${p.message}` : `${p.file}:${p.line}: ${p.message}`;
}

/** Reads and validates one SKILL.md file. */
export function readSkillFile(file: string): FrontMatterResult {
  const read = readRegularFile(file, MAX_SKILL_MD_BYTES);
  if (!read.ok) {
    const message =
      read.code === "too_large"
        ? `${SKILL_FILE} ${read.error} (MAX_SKILL_MD_BYTES)`
        : read.code === "missing"
          ? `no ${SKILL_FILE}`
          : `${SKILL_FILE} ${read.error}`;
    return { ok: false, problems: [{ file, message }], warnings: [] };
  }
  return parseFrontMatter(read.data.toString("utf8"), file);
}

/** Validates SKILL.md text; `file` is only used to name problems. */
export function parseFrontMatter(text: string, file: string): FrontMatterResult {
  const problems: SkillProblem[] = [];
  const warnings: SkillProblem[] = [];
  const fail = (message: string, line?: number): FrontMatterResult => ({
    ok: false,
    problems: [...problems, { file, message, ...(line === undefined ? {} : { line }) }],
    warnings,
  });

  // An editor-added BOM is not the author's intent; tolerate it.
  const src = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = src.split("\n");
  const isFence = (l: string | undefined) => l !== undefined && l.replace(/\r$/, "").trimEnd() === "---";
  if (!isFence(lines[0])) {
    return fail(`missing front matter: ${SKILL_FILE} must start with a '---' line`, 1);
  }
  let close = -1;
  for (let i = 1; i < lines.length; i++) {
    if (isFence(lines[i])) {
      close = i;
      break;
    }
  }
  if (close < 0) return fail("front matter is not closed: no second '---' line", 1);

  const yamlText = lines.slice(1, close).join("\n");
  const body = lines.slice(close + 1).join("\n");
  // YAML line N is file line N + 1 (the opening fence is line 1).
  const fileLine = (yamlLine: number | undefined) => (yamlLine === undefined ? undefined : yamlLine + 1);

  const { LineCounter: Counter, parseDocument: parse } = yaml();
  const lineCounter = new Counter();
  const doc = parse(yamlText, {
    lineCounter,
    schema: "core",
    resolveKnownTags: false,
    uniqueKeys: true,
    prettyErrors: true,
  });
  for (const e of [...doc.errors, ...doc.warnings]) {
    const first = e.message.split("\n")[0] ?? e.message;
    // The parser appends "at line L, column C"; we report the line ourselves in file terms.
    const msg = first.replace(/ at line \d+, column \d+:?$/, "");
    const line = fileLine(e.linePos?.[0]?.line);
    problems.push({ file, message: `front matter YAML: ${msg}`, ...(line === undefined ? {} : { line }) });
  }
  if (problems.length > 0) return { ok: false, problems, warnings };

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (e) {
    return fail(`front matter YAML: ${(e as Error).message}`);
  }
  if (data === null || data === undefined)
    return fail("front matter is empty: name and description are required");
  if (typeof data !== "object" || Array.isArray(data))
    return fail("front matter must be a mapping of keys to values");
  const fm = data as Record<string, unknown>;
  const lineOfKey = keyLines(doc, lineCounter);
  const keyLine = (key: string): number | undefined => fileLine(lineOfKey.get(key));
  const problem = (key: string, message: string) => {
    const line = keyLine(key);
    problems.push({ file, message, ...(line === undefined ? {} : { line }) });
  };
  const warn = (key: string, message: string) => {
    const line = keyLine(key);
    warnings.push({ file, message, ...(line === undefined ? {} : { line }) });
  };

  const name = fm.name;
  if (name === undefined || name === null) problem("name", "`name` is required");
  else if (typeof name !== "string") problem("name", "`name` must be a string (quote it)");
  else if (!SKILL_NAME_PATTERN.test(name)) {
    problem("name", `\`name\` ${JSON.stringify(name)} must be 1-64 characters of A-Z a-z 0-9 . _ -`);
  } else if (name === "." || name === "..") {
    // Matches the pattern but names a path component; pack would write ../ entries.
    problem("name", `\`name\` may not be "." or ".."`);
  }

  const description = fm.description;
  if (description === undefined || description === null) problem("description", "`description` is required");
  else if (typeof description !== "string") problem("description", "`description` must be a string");
  else if (description.trim() === "") problem("description", "`description` must not be empty");
  else if (description.length > MAX_DESCRIPTION_CHARS) {
    warn(
      "description",
      `\`description\` is ${description.length} characters, over the standard's ${MAX_DESCRIPTION_CHARS}; it loads, and the prompt shows it clipped`,
    );
  }

  if (fm.license !== undefined && typeof fm.license !== "string")
    problem("license", "`license` must be a string (a license name or a bundled file's name)");
  if (fm.compatibility !== undefined) {
    if (typeof fm.compatibility !== "string") problem("compatibility", "`compatibility` must be a string");
    else if (fm.compatibility.length > MAX_COMPATIBILITY_CHARS) {
      warn(
        "compatibility",
        `\`compatibility\` is ${fm.compatibility.length} characters, over the standard's ${MAX_COMPATIBILITY_CHARS}`,
      );
    }
  }
  let metadata: Record<string, string> | undefined;
  if (fm.metadata !== undefined && fm.metadata !== null) {
    if (typeof fm.metadata !== "object" || Array.isArray(fm.metadata)) {
      problem("metadata", "`metadata` must be a mapping of keys to string values");
    } else {
      metadata = {};
      for (const [k, v] of Object.entries(fm.metadata as Record<string, unknown>)) {
        // `version: 1.0` parses as a number: kept as its text. Nested values are not the standard's.
        if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") metadata[k] = String(v);
        else warn("metadata", `\`metadata.${k}\` is not a string value (ignored)`);
      }
    }
  }
  let standardTools: string[] | undefined;
  const rawTools = fm["allowed-tools"];
  if (rawTools !== undefined && rawTools !== null) {
    if (typeof rawTools === "string") standardTools = rawTools.split(/\s+/).filter((t) => t !== "");
    else if (Array.isArray(rawTools) && rawTools.every((t) => typeof t === "string"))
      standardTools = rawTools;
    else
      problem("allowed-tools", "`allowed-tools` must be a space-separated string of tool names (or a list)");
  }

  for (const key of ["capabilities", "allowed_tools"] as const) {
    const v = fm[key];
    if (v === undefined) continue;
    if (!Array.isArray(v)) problem(key, `\`${key}\` must be a list of strings`);
    else {
      const bad = v.findIndex((x) => typeof x !== "string");
      if (bad >= 0) problem(key, `\`${key}\` must be a list of strings (item ${bad + 1} is not a string)`);
    }
  }
  if (fm.scope !== undefined && typeof fm.scope !== "string") problem("scope", "`scope` must be a string");

  for (const key of VERSION_GATE_KEYS) {
    if (key in fm) {
      problem(key, `\`${key}\` is not allowed: skills are not version-gated (remove the key)`);
    }
  }
  for (const key of Object.keys(fm)) {
    if (KNOWN_KEYS.has(key) || VERSION_GATE_KEYS.includes(key)) continue;
    const line = keyLine(key);
    warnings.push({
      file,
      message: `unknown key \`${key}\` (ignored)`,
      ...(line === undefined ? {} : { line }),
    });
  }

  if (problems.length > 0) return { ok: false, problems, warnings };
  const meta: SkillMeta = { name: name as string, description: (description as string).trim() };
  if (fm.capabilities !== undefined) meta.capabilities = fm.capabilities as string[];
  if (fm.allowed_tools !== undefined || standardTools !== undefined) {
    meta.allowed_tools = [
      ...new Set([...((fm.allowed_tools as string[] | undefined) ?? []), ...(standardTools ?? [])]),
    ];
  }
  if (fm.scope !== undefined) meta.scope = fm.scope as string;
  if (typeof fm.license === "string") meta.license = fm.license;
  if (typeof fm.compatibility === "string") meta.compatibility = fm.compatibility;
  if (metadata !== undefined) meta.metadata = metadata;
  return { ok: true, meta, body, warnings };
}

/** YAML line of each top-level key, so a problem can point at the key that caused it. */
function keyLines(doc: ReturnType<typeof parseDocument>, lc: LineCounter): Map<string, number> {
  const out = new Map<string, number>();
  const contents = doc.contents as {
    items?: { key?: { value?: unknown; range?: [number, number, number] } }[];
  };
  if (!contents || !Array.isArray(contents.items)) return out;
  for (const item of contents.items) {
    const k = item.key;
    if (!k || k.range === undefined) continue;
    out.set(String(k.value), lc.linePos(k.range[0]).line);
  }
  return out;
}
