/**
 * `scoot policy check <action> <input> [--mode M] [--unattended] [--execute-plan FILE]`: a dry run
 * of the very call pipeline the agent uses, up to the question (validation, effects, the gate with
 * a binding plan's narrowing, `parallel` children, then `[[tools.rules]]` and who could be asked:
 * the one decision of agent/decide.ts), with the loaded configuration. It prints `decision=` and
 * `reason=`/`rule=` as the run would decide, and `approval=` (not needed, not needed for a
 * known-safe command, allowed by a rule, or would ask) for an allowed call.
 * `--unattended` judges as an unattended run would: the mode clamped to `edge.max_job_policy`
 * and `guarded` taken as `readonly`. The printed `mode=` is always the mode that judged.
 */
import os from "node:os";
import { decisionOf, pipelineRules, safeCommandsRun } from "../agent/call-decision.js";
import { dryRunDecision, prepareCall } from "../agent/call-prepare.js";
import type { CallDecision } from "../agent/decide.js";
import { planGate, planScope } from "../agent/plan-narrow.js";
import { tokenFilePath } from "../config/secrets.js";
import { effectiveUnattended, parsePolicyMode } from "../policy/modes.js";
import { modeAtProjectRoot } from "../policy/project-root.js";
import { buildGateSettings } from "../policy/settings.js";
import { TOOLS_BY_NAME } from "../tools/registry.js";
import { flagBool, flagString } from "./args.js";
import { type Cli, loadForCommand } from "./context.js";
import { EXIT } from "./io.js";
import { planFromFlags } from "./run.js";

export async function runPolicyCheck(cli: Cli): Promise<number> {
  const [action, input, extra] = cli.args.words;
  if (!action || input === undefined || extra !== undefined) {
    cli.io.err(
      'usage: scoot policy check <action> <input> [--mode M] [--unattended] [--execute-plan FILE]\n  e.g. scoot policy check bash \'rm -rf /\'\n       scoot policy check file_write \'{"path":"out.txt","content":"x"}\' --mode readonly\n',
    );
    return EXIT.usage;
  }
  const loaded = await loadForCommand(cli);
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
  const unattended = flagBool(cli.args, "unattended");
  if (unattended) mode = effectiveUnattended(mode, config.edge.max_job_policy);
  // The same mode a run here would get: a home root is read-only.
  const atRoot = modeAtProjectRoot(cli.cwd, { mode, userHome: os.homedir() });
  if (atRoot.notice) cli.io.err(`scoot policy check: ${atRoot.notice}\n`);
  mode = atRoot.mode;
  const settings = buildGateSettings(config, cli.cwd, {
    mode,
    tokenFile: tokenFilePath(config, paths.configDir),
    scootHome: paths.root,
    configDir: paths.configDir,
  });
  // A plan that binds narrows the gate, as the run that carries it out would.
  const plan = planFromFlags(cli);
  if (!plan.ok) {
    cli.io.err(`scoot policy check: ${plan.error}\n`);
    return EXIT.usage;
  }
  const judge = plan.value?.binds ? planGate(planScope(plan.value.plan, settings.projectRoot)) : undefined;
  const prepared = prepareCall(action, input, {
    settings,
    tools: TOOLS_BY_NAME,
    ...(judge ? { judge } : {}),
  });
  // The run's own decision (agent/decide.ts): the gate, a denied child, the rules, then who could
  // be asked. A person at the keyboard is, unless the run is unattended or approval is "never".
  const dry = dryRunDecision(prepared);
  const canAsk = !unattended && config.tools.approval !== "never";
  const decision: CallDecision = !dry.allow
    ? { kind: "refuse", why: "denied", reason: dry.reason }
    : decisionOf(prepared, {
        rules: pipelineRules(config.tools.rules, TOOLS_BY_NAME, settings),
        canAsk,
        safeCommands: safeCommandsRun(mode, config),
        ...(unattended ? { nobody: "nobody can answer in an unattended run" } : {}),
      });
  cli.io.out(`mode=${mode}\n`);
  if (decision.kind === "refuse") {
    cli.io.out(`decision=deny\nreason=${decision.reason}\n`);
    if ("rule" in decision) cli.io.out(`rule=${decision.rule}\n`);
    return EXIT.failed;
  }
  cli.io.out("decision=allow\n");
  if (decision.kind === "ask")
    cli.io.out(`approval=would ask${decision.rule ? ` (rule ${decision.rule})` : ""}\n`);
  else if (decision.why === "rule") cli.io.out(`approval=${decision.reason}\nrule=${decision.rule}\n`);
  else if (decision.why === "known_safe") cli.io.out("approval=not needed (known-safe command)\n");
  else cli.io.out("approval=not needed\n");
  return EXIT.ok;
}
