/**
 * The gate narrowed to an approved plan (docs/safety.md "Plans as contracts"). The normal gate
 * decides first; only a call it allowed comes here, and this can only take away:
 *
 * - writes (any call whose effects name write paths, or claim the write capability): each path
 *   must be a file the plan names, resolved against the project root as the gate resolves it
 *   (`./a.txt` is `a.txt`; `../x` is outside unless the plan names that very path), and the
 *   file the tool would open must be that named file itself — a named path that is a symbolic
 *   link to another file, or another path linking to a named one, is not the file approved;
 * - commands: a command the plan names, exactly (the same words when both are plain), or the
 *   words of one it marks as a prefix with a final ` *` followed by words none of which is a
 *   stretching option (tools/plan-command.ts): `npm test` covers only `npm test`, `npm test *`
 *   covers `npm test -- --watch`, never `npm testx`, `npm test; rm -rf x` nor `npm test -- -u`;
 * - network: the URL's host (and port, when not 80 or 443) is one the plan names; user info in
 *   the URL does not count, the host after it does;
 * - MCP calls: a plan names files, commands and hosts, never an MCP tool, so none runs;
 * - reads and Scoot's own tools (skill, recall) are not narrowed.
 *
 * Anything else is denied with a reason that begins "not in the approved plan" and says what the
 * plan names, so the model can finish the rest or say what it could not do.
 */
import os from "node:os";
import path from "node:path";
import type { Effects, Verdict } from "../core/types.js";
import { decide } from "../policy/gate.js";
import type { GateSettings } from "../policy/types.js";
import { matchPlanCommand, type PlanCommand, parsePlanCommand } from "../tools/plan-command.js";
import { normalHost, type Plan } from "../tools/plan-shape.js";

/** The reason's first words: the model, the audit log and the tests look for them. */
export const NOT_IN_PLAN = "not in the approved plan";
/** How many named items a denial lists before "…": enough to steer the model, bounded. */
const MAX_NAMED_IN_REASON = 10;

/** What a plan allows, in the form each decision compares. Built once per run. */
export interface PlanScope {
  root: string;
  /** Absolute, lexically resolved against the root. */
  files: ReadonlySet<string>;
  /** The files as the plan wrote them, for reasons. */
  filesShown: readonly string[];
  commands: readonly PlanCommand[];
  hosts: ReadonlySet<string>;
}

function lexical(p: string, root: string): string {
  if (p === "~" || p.startsWith("~/")) return path.resolve(os.homedir(), p.slice(2));
  return path.resolve(root, p);
}

export function planScope(plan: Plan, root: string): PlanScope {
  const files = new Set<string>();
  const filesShown: string[] = [];
  const commands: PlanCommand[] = [];
  const hosts = new Set<string>();
  for (const step of plan.steps) {
    for (const f of step.files ?? []) {
      const abs = lexical(f, root);
      if (!files.has(abs)) filesShown.push(f);
      files.add(abs);
    }
    for (const c of step.commands ?? []) {
      // A checked plan's commands all read; one that does not (a plan built by hand) names nothing.
      const named = parsePlanCommand(c);
      if (named.ok && !commands.some((n) => n.text === named.value.text)) commands.push(named.value);
    }
    for (const h of step.hosts ?? []) {
      const n = normalHost(h);
      if (n !== undefined) hosts.add(n);
    }
  }
  return { root, files, filesShown, commands, hosts };
}

function listed(items: readonly string[], what: string): string {
  if (items.length === 0) return `the plan names no ${what}`;
  const shown = items.slice(0, MAX_NAMED_IN_REASON).map((s) => JSON.stringify(s));
  const more = items.length > MAX_NAMED_IN_REASON ? `, … (${items.length - MAX_NAMED_IN_REASON} more)` : "";
  return `the plan names the ${what} ${shown.join(", ")}${more}`;
}

function notInPlan(what: string, named: string): Verdict {
  return { allow: false, reason: `${NOT_IN_PLAN}: ${what} (${named})` };
}

/**
 * Whether a command is one the plan names (see the module comment): undefined when it is, else
 * what the refusal says about it.
 */
export function commandNotInPlan(command: string, scope: PlanScope): string | undefined {
  let stretched: string | undefined;
  for (const named of scope.commands) {
    const m = matchPlanCommand(named, command);
    if (m.match) return undefined;
    if (m.stretch && stretched === undefined)
      stretched = `: ${JSON.stringify(m.stretch.word)} ${m.stretch.does}, which ${JSON.stringify(m.stretch.named)} does not cover`;
  }
  return `running ${JSON.stringify(command.trim().slice(0, 200))}${stretched ?? ""}`;
}

/** How a plan allows more commands: the end of a command's refusal. */
const HOW_TO_ALLOW_COMMANDS =
  'a command runs only as the plan names it: to allow another, the plan names it exactly, or ends a harmless prefix with " *", as in "npm test *"';

/** The host key of a URL (as normalHost gives a plan's), or undefined when it does not parse. */
export function urlHost(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const port = u.port === "" || u.port === "80" || u.port === "443" ? "" : `:${u.port}`;
  return `${u.hostname.toLowerCase()}${port}`;
}

/** The named file with its directories resolved and itself not followed: what a write must open. */
function namedFileOpened(abs: string, settings: GateSettings): string | undefined {
  const dir = settings.realpath(path.dirname(abs));
  return dir === undefined ? undefined : path.join(dir, path.basename(abs));
}

/** Narrows one verdict the gate gave to what the plan allows. */
export function narrowToPlan(
  effects: Effects,
  verdict: Verdict,
  settings: GateSettings,
  scope: PlanScope,
): Verdict {
  if (!verdict.allow) return verdict;
  const cap = effects.capability;
  if (cap === "native") return verdict;
  const writes = effects.writePaths ?? [];
  if (cap === "write" && writes.length === 0)
    return notInPlan("a write that names no file", listed(scope.filesShown, "files"));
  for (let i = 0; i < writes.length; i++) {
    const p = writes[i]!;
    const abs = lexical(p, scope.root);
    if (!scope.files.has(abs)) return notInPlan(`writing ${p}`, listed(scope.filesShown, "files"));
    const opened = verdict.target.write[i];
    if (opened !== undefined && opened !== namedFileOpened(abs, settings))
      return notInPlan(
        `writing ${p}: it is a symbolic link to ${opened}, which is not the file the plan names`,
        listed(scope.filesShown, "files"),
      );
  }
  const command = effects.command === undefined ? undefined : commandNotInPlan(effects.command, scope);
  if (command !== undefined)
    return notInPlan(
      command,
      `${listed(
        scope.commands.map((c) => c.text),
        "commands",
      )}; ${HOW_TO_ALLOW_COMMANDS}`,
    );
  if (effects.url !== undefined || cap === "net_read" || cap === "net_write") {
    const host = effects.url ? urlHost(effects.url.url) : undefined;
    if (host === undefined || !scope.hosts.has(host))
      return notInPlan(
        host === undefined ? "a network call that names no host" : `a request to ${host}`,
        listed([...scope.hosts], "hosts"),
      );
  }
  if (effects.mcp !== undefined)
    return notInPlan(
      `the MCP tool ${effects.mcp.server}/${effects.mcp.tool}`.slice(0, 200),
      "a plan names files, commands and hosts, never MCP tools",
    );
  return verdict;
}

/** The gate of a run bound to a plan: the normal decision, then the narrowing. */
export function planGate(scope: PlanScope): (effects: Effects, settings: GateSettings) => Verdict {
  return (effects, settings) => narrowToPlan(effects, decide(effects, settings), settings, scope);
}
