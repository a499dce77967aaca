/**
 * `skills`: where Scoot looks, what it found, what lost a name clash and what is broken.
 * Informational: it exits 0 even with problems (`skills check` is the gate for those).
 */
import { type CommandOutput, lines } from "./command.js";
import { type DiscoverOptions, type Discovery, discoverSkills, type SkillRoot } from "./discover.js";
import { formatProblem } from "./frontmatter.js";

const OPT_IN_KEY: Record<string, string> = {
  project: "skills.include_project_skills",
  agents: "skills.include_agents_skills",
};

function rootState(r: SkillRoot): string {
  if (!r.enabled) return `off (set ${OPT_IN_KEY[r.source] ?? "it"} = true)`;
  if (r.duplicateOf !== undefined) return `same directory as ${r.duplicateOf}; searched once`;
  return r.exists ? "exists" : "missing";
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

export function formatSkillsList(d: Discovery): CommandOutput {
  if (!d.enabled) {
    return { stdout: lines(["skills are disabled (skills.enabled = false)"]), stderr: "", exitCode: 0 };
  }
  const out: string[] = ["Search roots (first wins on a name clash):"];
  for (const r of d.roots) out.push(`  ${r.source.padEnd(7)} ${r.path}  [${rootState(r)}]`);
  out.push("");
  if (d.skills.length === 0) out.push("Skills: none");
  else {
    out.push(`Skills (${d.skills.length}):`);
    for (const s of d.skills) {
      out.push(`  ${s.name}  ${oneLine(s.description)}`);
      out.push(`    ${s.dir}`);
    }
  }
  if (d.shadowed.length > 0) {
    out.push("", "Shadowed (a skill with the same name comes earlier):");
    for (const s of d.shadowed) out.push(`  ${s.name}  ${s.dir}  (shadowed by ${s.by})`);
  }
  if (d.problems.length > 0) {
    out.push("", "Problems (these skills are not loaded):");
    for (const p of d.problems) out.push(`  ${formatProblem(p)}`);
  }
  return {
    stdout: lines(out),
    stderr: lines(d.warnings.map((w) => `warning: ${formatProblem(w)}`)),
    exitCode: 0,
  };
}

export function runSkillsList(opts: DiscoverOptions): CommandOutput & { discovery: Discovery } {
  const discovery = discoverSkills(opts);
  return { ...formatSkillsList(discovery), discovery };
}
