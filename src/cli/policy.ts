/**
 * `scoot policy check <action> <input> [--mode M] [--unattended]`: a dry run of the very call
 * pipeline the agent uses, up to the gate (validation, effects, the gate; `parallel` children
 * included), with the loaded configuration (hardening flags, secret paths, MCP allowlists).
 * `--unattended` judges as an unattended run would: the mode clamped to `edge.max_job_policy`
 * and `guarded` taken as `readonly`. The printed `mode=` is always the mode that judged.
 */
import os from "node:os";
import { dryRunDecision, prepareCall } from "../agent/calls.js";
import { tokenFilePath } from "../config/secrets.js";
import { effectiveUnattended, parsePolicyMode } from "../policy/modes.js";
import { modeAtProjectRoot } from "../policy/project-root.js";
import { buildGateSettings } from "../policy/settings.js";
import { TOOLS_BY_NAME } from "../tools/registry.js";
import { flagBool, flagString } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";

export async function runPolicyCheck(cli: Cli): Promise<number> {
  const [action, input, extra] = cli.args.words;
  if (!action || input === undefined || extra !== undefined) {
    cli.io.err(
      'usage: scoot policy check <action> <input> [--mode M] [--unattended]\n  e.g. scoot policy check bash \'rm -rf /\'\n       scoot policy check file_write \'{"path":"out.txt","content":"x"}\' --mode readonly\n',
    );
    return EXIT.usage;
  }
  const loaded = loadForCommand(cli);
  if (!loaded.ok) return loaded.exitCode;
  const { config, paths } = loaded.value;
  const modeFlag = flagString(cli.args, "mode") ?? flagString(cli.args, "policy");
  let mode = config.tools.policy;
  if (modeFlag !== undefined) {
    const parsed = parsePolicyMode(modeFlag);
    if (!parsed) {
      cli.io.err(
        `scoot policy check: unknown mode "${modeFlag}" (use readonly, guarded, unrestricted or yolo)\n`,
      );
      return EXIT.usage;
    }
    mode = parsed;
  }
  if (flagBool(cli.args, "unattended")) mode = effectiveUnattended(mode, config.edge.max_job_policy);
  // The same mode a run here would get: a home root is read-only.
  const atRoot = modeAtProjectRoot(cli.cwd, { mode, userHome: os.homedir() });
  if (atRoot.notice) cli.io.err(`scoot policy check: ${atRoot.notice}\n`);
  mode = atRoot.mode;
  const settings = buildGateSettings(config, cli.cwd, { mode, tokenFile: tokenFilePath(config, paths.root) });
  const decision = dryRunDecision(prepareCall(action, input, { settings, tools: TOOLS_BY_NAME }));
  cli.io.out(`mode=${mode}\n`);
  if (decision.allow) {
    cli.io.out("decision=allow\n");
    return EXIT.ok;
  }
  cli.io.out(`decision=deny\nreason=${decision.reason}\n`);
  return EXIT.failed;
}
