/** The skills surface other modules use: discovery, the registry, the prompt block, the commands. */
export { runSkillsCheck } from "./check.js";
export type { CommandOutput } from "./command.js";
export {
  type DiscoverOptions,
  type Discovery,
  discoverSkills,
  type ShadowedSkill,
  type Skill,
  type SkillRoot,
  skillRoots,
} from "./discover.js";
export { formatProblem, MAX_SKILL_MD_BYTES, type SkillMeta, type SkillProblem } from "./frontmatter.js";
export { formatSkillsList, runSkillsList } from "./list.js";
export { runSkillsPack } from "./pack.js";
export { skillsPromptSection } from "./prompt.js";
export { makeSkillRegistry, type SkillRegistry } from "./registry.js";
