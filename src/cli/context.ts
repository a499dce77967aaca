/** What every command starts from: parsed arguments, the home, and the loaded configuration. */
import {
  ensureHome,
  type HomePaths,
  HomeUnknownError,
  homeWriteProblem,
  resolveHomePaths,
  unwritableReason,
  userHomeDir,
} from "../config/home.js";
import { type LoadedConfig, loadConfig } from "../config/load.js";
import type { ParsedArgs } from "./args.js";
import { applyBackendFlags } from "./backend-flags.js";
import { EXIT, type Io } from "./io.js";

export interface Cli {
  args: ParsedArgs;
  env: NodeJS.ProcessEnv;
  io: Io;
  cwd: string;
  /**
   * Called when a goal has run to its end in a command that is not itself a run of a goal (an
   * editor's prompt in `scoot acp`, a `run` request to `scoot serve`): the CLI then keeps the
   * app's compiled code for the next process, as a run of a goal does (src/app-code-cache.ts).
   * Absent in process.
   */
  goalRan?: () => void;
}

/** What a command runs with besides its arguments: the process's own, or a test's. */
export type Surroundings = Omit<Cli, "args">;

export interface Loaded extends LoadedConfig {
  paths: HomePaths;
}

export type Loadable = { ok: true; value: Loaded } | { ok: false; exitCode: number };

/** Resolves the home, creates it on first use, loads the config and prints its warnings. */
export async function loadForCommand(cli: Cli): Promise<Loadable> {
  let paths: HomePaths;
  try {
    // The user's home is needed even with SCOOT_HOME (the gate protects it, skills live under it).
    userHomeDir(cli.env);
    paths = resolveHomePaths(
      typeof cli.args.flags["scoot-home"] === "string" ? cli.args.flags["scoot-home"] : undefined,
      cli.env,
    );
  } catch (e) {
    if (!(e instanceof HomeUnknownError)) throw e;
    cli.io.err(`scoot: ${e.message}\n`);
    return { ok: false, exitCode: EXIT.usage };
  }
  const root = paths.root;
  try {
    ensureHome(paths);
  } catch (e) {
    // A read-only filesystem makes a recursive mkdir say ENOENT: name the real reason.
    const why = unwritableReason(root, e);
    const line =
      homeWriteProblem(why, root) ??
      `cannot create the home directory ${root}: ${(e as Error).message}; fix: choose another with --scoot-home DIR or SCOOT_HOME`;
    cli.io.err(`scoot: ${line}\n`);
    return { ok: false, exitCode: EXIT.usage };
  }
  const loaded = loadConfig(paths.configDir, cli.env);
  if (!loaded.ok) {
    // Every problem at once (and the warnings beside them), so one edit can fix them all.
    for (const w of loaded.error.warnings) cli.io.err(`scoot: warning: ${w}\n`);
    for (const p of loaded.error.problems) cli.io.err(`scoot: configuration error: ${p}\n`);
    return { ok: false, exitCode: EXIT.usage };
  }
  for (const w of loaded.value.warnings) cli.io.err(`scoot: warning: ${w}\n`);
  // A rule is checked against the tools' scopes, which the config layer does not know. The tool
  // registry is loaded only then: a listing or a report has no other use for it.
  const raw = loaded.value.config.tools.rules;
  const problem = raw.length === 0 ? undefined : await rulesProblem(raw);
  if (problem !== undefined) {
    const where = loaded.value.file ? `${loaded.value.file}: ` : "";
    cli.io.err(`scoot: configuration error: ${where}${problem}\n`);
    return { ok: false, exitCode: EXIT.usage };
  }
  const flags = applyBackendFlags(loaded.value.config, cli.args);
  if (!flags.ok) {
    cli.io.err(`scoot: ${flags.error}\n`);
    return { ok: false, exitCode: EXIT.usage };
  }
  return { ok: true, value: { ...loaded.value, paths } };
}

/** What is wrong with the `[[tools.rules]]` entries, as one text, or undefined. */
async function rulesProblem(raw: readonly unknown[]): Promise<string | undefined> {
  const { checkRules, rulesProblemText } = await import("../agent/approval-rules.js");
  const { problems } = checkRules(raw);
  return problems.length === 0 ? undefined : rulesProblemText(problems);
}
