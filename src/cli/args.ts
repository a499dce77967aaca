/**
 * Command-line parsing. Flags may stand anywhere; what is left forms the command words.
 * Unknown flags and missing values are usage errors (exit 2), never silently ignored.
 */
import type { Result } from "../core/types.js";
import { closestCommand } from "./command-hint.js";
import { COMMAND_HELP } from "./help.js";

interface FlagSpec {
  /** The key the value is stored under. */
  key: string;
  takesValue: boolean;
  /**
   * The value may be left out (the flag is then `true`): `--model` alone is `scoot doctor
   * --model`, the model check; with a name it is the backend's model, as everywhere (and for
   * `doctor`, the model the check runs with).
   */
  valueOptional?: boolean;
}

const FLAGS: Record<string, FlagSpec> = {
  "-e": { key: "eval", takesValue: true },
  "--eval": { key: "eval", takesValue: true },
  "--retries": { key: "retries", takesValue: true },
  "--policy": { key: "policy", takesValue: true },
  "--mode": { key: "mode", takesValue: true },
  "--unattended": { key: "unattended", takesValue: false },
  "--plan": { key: "plan", takesValue: false },
  "--session-id": { key: "session-id", takesValue: true },
  "--resume": { key: "resume", takesValue: true },
  "--continue": { key: "continue", takesValue: false },
  "--scoot-home": { key: "scoot-home", takesValue: true },
  "--trace": { key: "trace", takesValue: false },
  "--no-color": { key: "no-color", takesValue: false },
  "--json": { key: "json", takesValue: false },
  "--output-schema": { key: "output-schema", takesValue: true },
  "--ticks": { key: "ticks", takesValue: true },
  "--approval": { key: "approval", takesValue: true },
  "--execute-plan": { key: "execute-plan", takesValue: true },
  "--plan-sha256": { key: "plan-sha256", takesValue: true },
  "-h": { key: "help", takesValue: false },
  "--help": { key: "help", takesValue: false },
  "-v": { key: "version", takesValue: false },
  "--version": { key: "version", takesValue: false },
  // setup
  "--base-url": { key: "base-url", takesValue: true },
  "--model": { key: "model", takesValue: true, valueOptional: true },
  "--api": { key: "api", takesValue: true },
  "--token-source": { key: "token-source", takesValue: true },
  "--token-env": { key: "token-env", takesValue: true },
  "--token-cmd": { key: "token-cmd", takesValue: true },
  "--token-stdin": { key: "token-stdin", takesValue: false },
  "--yes": { key: "yes", takesValue: false },
  "-y": { key: "yes", takesValue: false },
  "--force": { key: "force", takesValue: false },
  // audit export
  "--follow": { key: "follow", takesValue: false },
  // audit verify
  "--head": { key: "head", takesValue: true },
  // sessions list
  "--all": { key: "all", takesValue: false },
  "--limit": { key: "limit", takesValue: true },
};

/** Help asked for where a value was expected is still help. */
const HELP_FLAGS = new Set(["-h", "--help"]);

export interface ParsedArgs {
  words: string[];
  flags: Record<string, string | true>;
}

export function parseArgs(argv: string[]): Result<ParsedArgs> {
  const words: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      words.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith("-") && arg !== "-") {
      const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
      const name = eq > 0 ? arg.slice(0, eq) : arg;
      const spec = FLAGS[name];
      if (!spec) return { ok: false, error: unknownOption(name, words[0]) };
      if (!spec.takesValue) {
        if (eq > 0) return { ok: false, error: `option ${name} takes no value` };
        flags[spec.key] = true;
        continue;
      }
      let value: string | undefined;
      if (eq > 0) value = arg.slice(eq + 1);
      else if (spec.valueOptional && (argv[i + 1] === undefined || argv[i + 1]!.startsWith("-"))) {
        flags[spec.key] = true;
        continue;
      } else if (HELP_FLAGS.has(argv[i + 1] ?? "")) {
        // `scoot -e --help` asks for help: it is never a goal sent to the model.
        flags.help = true;
        i += 1;
        continue;
      } else {
        value = argv[i + 1];
        i += 1;
      }
      if (value === undefined) return { ok: false, error: `option ${name} needs a value` };
      flags[spec.key] = value;
      continue;
    }
    words.push(arg);
  }
  return { ok: true, value: { words, flags } };
}

/**
 * An option no command takes, the one it most likely meant (`--polcy`: `--policy`), and the help
 * of the command it was given to (docs/commands.md "Unknown commands").
 */
function unknownOption(name: string, command: string | undefined): string {
  const long = Object.keys(FLAGS).filter((f) => f.startsWith("--"));
  const near = name.startsWith("--")
    ? closestCommand(
        name.slice(2),
        long.map((f) => f.slice(2)),
      )
    : undefined;
  const help =
    command !== undefined && Object.hasOwn(COMMAND_HELP, command)
      ? `scoot ${command} --help`
      : "scoot --help";
  return `unknown option ${name}${near ? `; did you mean --${near}?` : ""} (see ${help})`;
}

export function flagString(args: ParsedArgs, key: string): string | undefined {
  const v = args.flags[key];
  return typeof v === "string" ? v : undefined;
}

export function flagBool(args: ParsedArgs, key: string): boolean {
  return args.flags[key] === true;
}

/** `--ticks N` / `--retries N`: a non-negative integer or a usage error. */
export function flagCount(args: ParsedArgs, key: string): Result<number | undefined> {
  const v = flagString(args, key);
  if (v === undefined) return { ok: true, value: undefined };
  if (!/^\d+$/.test(v)) return { ok: false, error: `--${key} needs a whole number >= 0, got "${v}"` };
  return { ok: true, value: Number(v) };
}

export const USAGE = `scoot — a local-first AI agent

Usage: scoot [global options] [command]
       scoot [global options] "goal"   the REPL with that goal (on a terminal), else like -e

Global options:
  -e, --eval <goal>       run one goal and print only the final answer
  --json                  machine-readable output (with -e: {session_id, answer, turns, usage, status})
  --output-schema <file>  with -e: the answer must be JSON valid against this JSON Schema
  --policy <mode>         readonly | guarded | unrestricted (alias yolo)
  --unattended            clamp the policy to edge.max_job_policy, guarded runs as readonly
  --plan                  with -e: plan the goal in readonly, print the plan, execute nothing
  --retries N             backend retries for transient errors
  --approval ask|never    ask before calls with an effect (default: ask in a REPL on a terminal)
  --execute-plan FILE     with -e: run bound to an approved plan (--plan --json output)
  --plan-sha256 HEX       with --execute-plan: refuse the plan unless it has this SHA-256
  --session-id <id>       custom session id ([A-Za-z0-9._-]{1,128})
  --resume <id>           continue that session (with -e, the REPL, serve)
  --continue              continue the latest session started in this directory
  --scoot-home DIR        runtime home (default $SCOOT_HOME or ~/.scoot)
  --trace                 stream progress to stderr
  --no-color              no colour in the live view (also NO_COLOR=1)
  --model M, --base-url URL, --api chat|responses
                          the backend for this run (over backend.* and SCOOT_BACKEND_*)
  --ticks N               for schedule run / daemon run: poll N times then exit (0 = forever)
  -h, --help              this help
  -v, --version           print the version

Commands (scoot <command> --help for one):
  repl                              interactive loop (the default); /exit leaves
  config                            resolved home, config file, every section, token source
  doctor [--json] [--model [M]]     health checks (exit 1 on any FAIL); --model: does the model (M) work with Scoot
  policy check <action> <input> [--mode M]
                                    dry-run the policy gate: decision=allow|deny
  sessions list [--all] [--limit N] [--json]
                                    this directory's sessions, newest first (--all: every project)
  session show <id>                 a transcript as JSONL
  audit show <session-id>           a session's audit events, oldest first, as JSONL
  audit export [--follow]           ship the audit log to the OTLP collector in [telemetry]
  audit verify [--json] [--head H]  check the audit hash chain (exit 1 naming the first break)
  skills                            skill search paths and skills
  skills check [dir]                validate skills (exit 1 if any is invalid)
  skills pack <dir> [out.tar]       validate and pack a skill
  schedule [list]                   jobs, triggers, effective modes, next fire times
  schedule run [--ticks N]          run the scheduler in the foreground
  daemon run [--ticks N]            the daemon, in the foreground
  daemon [status] [--json]          the daemon's last recorded state
  daemon stop                       signal the running daemon to stop
  undo [<session-id>] [--force]     revert the file changes of a session's last run
                                    (default: the latest session started here)
  diff [<session-id>]               the file changes a session made
  serve [--policy M] [--unattended] NDJSON requests on stdin, responses on stdout
  acp [--policy M] [--unattended]   Agent Client Protocol agent on stdio, for editors
  help [<command>]                  this help, or one command's (also scoot <command> --help)
  setup                             write a configuration: interactive on a terminal, or
                                    --yes --base-url URL --model M --api chat|responses
                                    --token-source env|file|cmd|none [--token-env NAME]
                                    [--token-cmd CMD] [--token-stdin] --policy M [--force]

Exit codes: 0 success, 1 the work failed, 2 usage or configuration error, 130 interrupted.

Docs (beside README.md, in the repository and in the installed package):
  docs/commands.md        every command, its options and exit codes
  docs/configuration.md   the runtime home, every config key, setup, token sources
  docs/safety.md          safety model and threat model: policy modes, the gate, the sandbox
  docs/tools.md           the built-in tools
  docs/sessions.md        sessions, resuming, undo, the audit log and its hash chain
  docs/context.md         the ReACT loop, context window, streaming, reasoning models
  docs/skills.md          skills
  docs/mcp.md             MCP servers
  docs/unattended.md      jobs and the daemon
  docs/fleet.md           systemd, Kubernetes, OpenTelemetry Collector, Prometheus
  docs/editors.md         scoot serve, editors (ACP), the library API
  docs/telemetry.md       OTLP export and metrics
  docs/keyboard.md        the live view, the REPL, health checks
  docs/reliability.md     reliability drills
  docs/benchmarks.md      benchmarks
  docs/architecture.md    the source layout and its layers, development
`;
