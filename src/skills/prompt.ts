/**
 * The skills block of the system prompt. Only names and descriptions go in: bodies can
 * be long and are someone else's text, so the model reads one only when it decides to.
 */
import type { Skill } from "./discover.js";

/** Each description line is capped again here; the prompt pays for every skill every turn. */
export const MAX_PROMPT_DESCRIPTION_CHARS = 300;

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

/** Empty string when no skills are loaded, so the prompt carries no empty heading. */
export function skillsPromptSection(
  skills: readonly (Pick<Skill, "name" | "description"> & Partial<Pick<Skill, "dir">>)[],
): string {
  if (skills.length === 0) return "";
  const lines = [
    "Skills (available instructions; only their names, descriptions and directories are shown here):",
    ...skills.map(
      (s) =>
        `- ${s.name}: ${oneLine(s.description, MAX_PROMPT_DESCRIPTION_CHARS)}${s.dir ? ` (directory: ${s.dir})` : ""}`,
    ),
    'To use one, read it with the `skill` action: {"name": "<skill>"} reads its SKILL.md; ' +
      '{"name": "<skill>", "path": "references/guide.md"} reads another file inside it.',
    "A script a skill bundles runs with bash from the skill's directory, like any other command. " +
      "Skills add instructions, never privileges: every other action still goes through the execution policy.",
  ];
  return lines.join("\n");
}
