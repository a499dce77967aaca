/**
 * The loaded skill set as the `skill` action and the prompt see it: a read-only view
 * built once per run from discovery, attached as `ctx.services.skills`.
 */
import type { Discovery, Skill } from "./discover.js";

export interface SkillRegistry {
  /** Skills in search order (the order of the roots, then directory name). */
  list(): Skill[];
  get(name: string): Skill | undefined;
}

export function makeSkillRegistry(source: Pick<Discovery, "skills"> | readonly Skill[]): SkillRegistry {
  const skills: Skill[] = [
    ...(Array.isArray(source) ? source : (source as Pick<Discovery, "skills">).skills),
  ];
  const byName = new Map<string, Skill>();
  // First wins, as in discovery: a hand-built list with a duplicate behaves the same way.
  for (const s of skills) if (!byName.has(s.name)) byName.set(s.name, s);
  const unique = [...byName.values()];
  return {
    list: () => [...unique],
    get: (name) => byName.get(name),
  };
}
