/** Real temp trees for skills tests. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { type Config, defaultConfig } from "../../src/config/schema.js";

export function tempDir(): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-")));
}

/** Writes `files` (relative path → content) under `root`, creating parents. */
export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(root, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
}

export function skillMd(
  name: string,
  description = `does ${name} things`,
  extra = "",
  body = "Body.\n",
): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}`;
}

export function config(skills: Partial<Config["skills"]> = {}): Config {
  const c = defaultConfig();
  c.skills = { ...c.skills, ...skills };
  return c;
}
