/** `scoot skills`, `scoot skills check [dir]`, `scoot skills pack <dir> [out.tar]`. */
import os from "node:os";
import { runSkillsCheck, runSkillsList, runSkillsPack } from "../skills/index.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";

export async function runSkills(cli: Cli): Promise<number> {
  const [sub, ...rest] = cli.args.words;
  const loaded = await loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const opts = {
    config: loaded.value.config,
    cwd: cli.cwd,
    homeDir: os.homedir(),
    scootHome: loaded.value.paths.root,
    configDir: loaded.value.paths.configDir,
  };
  let out: { stdout: string; stderr: string; exitCode: number };
  if (sub === undefined || sub === "list") {
    if (rest.length > 0) return usage(cli);
    out = runSkillsList(opts);
  } else if (sub === "check") {
    if (rest.length > 1) return usage(cli);
    out = runSkillsCheck(rest[0], opts);
  } else if (sub === "pack") {
    if (rest.length < 1 || rest.length > 2) return usage(cli);
    out = runSkillsPack(rest[0]!, rest[1], { cwd: cli.cwd });
  } else {
    return usage(cli);
  }
  if (out.stdout) cli.io.out(out.stdout);
  if (out.stderr) cli.io.err(out.stderr);
  return out.exitCode;
}

function usage(cli: Cli): number {
  cli.io.err("usage: scoot skills | scoot skills check [dir] | scoot skills pack <dir> [out.tar]\n");
  return EXIT.usage;
}
