/**
 * Per-command help: one row per top-level command word, as plain strings. It is read by the
 * small entry (`scoot <cmd> --help`, `scoot help <cmd>`) without loading any command module,
 * so `scoot --version` stays as fast as before (docs/commands.md).
 */

export interface CommandHelp {
  /** One line per form of the command. */
  usage: string[];
  /** What the command does, one or two lines. */
  about: string;
  /** Options and subcommands, each `name  what`. */
  options: string[];
  /** One command line a reader can copy. */
  example: string;
  /** The docs page with the rest. */
  docs: string;
}

const BACKEND_FLAGS = "--model M, --base-url URL, --api chat|responses   the backend for this run";

export const COMMAND_HELP: Record<string, CommandHelp> = {
  repl: {
    usage: ["scoot [repl] [--resume <id> | --continue] [--policy M] [--approval ask|never]"],
    about: "Interactive loop: each line is a goal, all goals in one session. Also `scoot` alone.",
    options: [
      "--resume <id>, --continue   continue a session (the latest of this directory)",
      "--approval ask|never        ask before calls with an effect (default ask on a terminal)",
      "--no-color                  no colour in the live view",
      BACKEND_FLAGS,
      "slash commands: /help /status /model /clear /compact /new /sessions /resume /undo /diff /exit",
    ],
    example: "scoot --continue",
    docs: "docs/keyboard.md",
  },
  config: {
    usage: ["scoot config [--json]"],
    about: "The resolved home, the config file in effect, every section, and the token source.",
    options: ["--json   the same as one JSON object", BACKEND_FLAGS],
    example: "scoot config --json",
    docs: "docs/configuration.md",
  },
  doctor: {
    usage: ["scoot doctor [--json] [--model [M]]"],
    about: "Health checks, each OK / WARN / FAIL with one line; exit 1 on any FAIL.",
    options: [
      "--json   the checks as JSON",
      "--model [M]  also run a few fixed goals against the configured model (or M): right answers, valid steps at the first try, corrections, structured output honoured, seconds per turn",
      BACKEND_FLAGS,
    ],
    example: "scoot doctor",
    docs: "docs/configuration.md",
  },
  policy: {
    usage: ["scoot policy check <action> <input> [--mode M] [--unattended]"],
    about:
      "Dry-run the policy gate with the loaded configuration: mode= (the mode that judged), decision=allow|deny, reason=.",
    options: [
      "check <action> <input>   the action and its input as the model would send it",
      "--mode M                 readonly | guarded | unrestricted (default: tools.policy)",
      "--unattended             judge as an unattended run: clamped to edge.max_job_policy, guarded as readonly",
      "exit 0 on allow, 1 on deny",
    ],
    example: "scoot policy check bash 'rm -rf /'",
    docs: "docs/safety.md",
  },
  sessions: {
    usage: ["scoot sessions [list] [--all] [--limit N] [--json]"],
    about:
      "The sessions started in this directory, newest first: number, id, modified, messages, first goal.",
    options: [
      "list        the list (also bare `scoot sessions`)",
      "--all       every project's sessions, with a project column",
      "--limit N   at most N sessions (default 20)",
      "--json      the same rows as JSON",
    ],
    example: "scoot sessions list --all --limit 50",
    docs: "docs/sessions.md",
  },
  session: {
    usage: ["scoot session show <id>"],
    about: "One session's transcript (rotated parts first) as JSONL on stdout.",
    options: ["show <id>   the session to print"],
    example: "scoot session show repl-1767225600000-4242",
    docs: "docs/sessions.md",
  },
  audit: {
    usage: [
      "scoot audit show <session-id>",
      "scoot audit verify [--json] [--head H]",
      "scoot audit export [--follow]",
    ],
    about: "The audit log: one session's events, the hash chain check, shipping to OTLP.",
    options: [
      "show <session-id>   that session's events from every generation, oldest first, as JSONL",
      "verify              check the hash chain; exit 1 naming file, line and kind of the first break",
      "  --json            the report as JSON",
      "  --head H          also check a head hash recorded earlier",
      "export              ship the log to the OTLP collector in [telemetry] from a durable cursor",
      "  --follow          keep following until SIGTERM, SIGHUP or Ctrl-C",
    ],
    example: "scoot audit verify --json",
    docs: "docs/sessions.md",
  },
  skills: {
    usage: ["scoot skills", "scoot skills check [dir]", "scoot skills pack <dir> [out.tar]"],
    about: "Skill search roots and skills; validate skills; pack one as a ustar archive.",
    options: [
      "(none)                list the roots, the skills, shadowed ones and problems",
      "check [dir]           validate without running anything; exit 1 if any is invalid",
      "pack <dir> [out.tar]  validate, then write the archive atomically",
    ],
    example: "scoot skills check ~/.scoot/skills",
    docs: "docs/skills.md",
  },
  schedule: {
    usage: ["scoot schedule [list] [--json]", "scoot schedule run [--ticks N]"],
    about: "Scheduled jobs: their triggers, effective modes and next fire times; or run them.",
    options: [
      "list          the jobs (also bare `scoot schedule`); --json for JSON",
      "run           poll and fire jobs in the foreground (needs [schedule] enabled = true)",
      "  --ticks N   poll N times, then exit 0 (0 = forever)",
    ],
    example: "scoot schedule run --ticks 1",
    docs: "docs/unattended.md",
  },
  daemon: {
    usage: ["scoot daemon run [--ticks N]", "scoot daemon [status] [--json]", "scoot daemon stop"],
    about: "The scheduler as the one owner of the home, in the foreground (run it under systemd).",
    options: [
      "run [--ticks N]   start the daemon (N polls, then exit; 0 = forever)",
      "status [--json]   its last recorded state and whether its pid is alive (bare `scoot daemon`)",
      "stop              SIGTERM to the verified daemon process, wait up to 10 s",
    ],
    example: "scoot daemon status --json",
    docs: "docs/unattended.md",
  },
  serve: {
    usage: ["scoot serve [--policy M] [--unattended] [--trace]"],
    about: "NDJSON over stdio: one request per stdin line, one response per stdout line.",
    options: [
      "--policy M      the mode for every run",
      "--unattended    clamp to edge.max_job_policy (guarded runs as readonly)",
      "methods: run, run.stream, session.list, session.get, audit.query",
    ],
    example: `echo '{"id":1,"method":"run","params":{"goal":"list TODOs"}}' | scoot serve`,
    docs: "docs/editors.md",
  },
  acp: {
    usage: ["scoot acp [--policy M] [--unattended] [--approval ask|never]"],
    about: "An Agent Client Protocol v1 agent on stdio, for editors (Zed, JetBrains, Neovim, Emacs).",
    options: [
      "--policy M        the sessions' starting mode",
      "--unattended      only modes the operator's ceiling leaves unchanged",
      "--approval never  do not ask the editor before calls with an effect",
    ],
    example: "scoot acp --policy readonly",
    docs: "docs/editors.md",
  },
  setup: {
    usage: [
      "scoot setup                 (interactive, on a terminal)",
      "scoot setup --yes --base-url URL --model M --api chat|responses",
      "            --token-source env|file|cmd|none [--token-env NAME] [--token-cmd CMD]",
      "            [--token-stdin] --policy M [--force]",
    ],
    about: "Write a configuration (config.toml in the home), asking or from the flags.",
    options: [
      "--yes, -y             take every answer from the flags, ask nothing",
      "--token-source S      where the token comes from: env, file, cmd or none",
      "--token-stdin         read the token for the token file from stdin",
      "--force               replace an existing configuration",
    ],
    example:
      "scoot setup --yes --base-url http://127.0.0.1:11434/v1 --model qwen2.5 --api chat --token-source none --policy guarded",
    docs: "docs/configuration.md",
  },
  undo: {
    usage: ["scoot undo [<session-id>] [--force]"],
    about: "Revert the file changes of a session's last run (default: the latest session started here).",
    options: [
      "<session-id>   the session (default: the latest one started in this directory)",
      "--force        overwrite files changed since Scoot changed them",
      "changes made by bash are not covered",
    ],
    example: "scoot undo",
    docs: "docs/sessions.md",
  },
  diff: {
    usage: ["scoot diff [<session-id>]"],
    about: "The file changes a session made, as unified diffs against what is on disk now.",
    options: ["<session-id>   the session (default: the latest one started in this directory)"],
    example: "scoot diff",
    docs: "docs/sessions.md",
  },
  help: {
    usage: ["scoot help [<command>]", "scoot <command> --help"],
    about: "This help, or one command's help.",
    options: ["<command>   one of the commands listed by scoot --help"],
    example: "scoot help audit",
    docs: "docs/commands.md",
  },
};

export function commandHelpText(name: string): string | undefined {
  const h = Object.hasOwn(COMMAND_HELP, name) ? COMMAND_HELP[name] : undefined;
  if (!h) return undefined;
  const lines = [`scoot ${name} — ${h.about}`, "", "Usage:"];
  for (const u of h.usage) lines.push(`  ${u}`);
  lines.push("", "Options:");
  for (const o of h.options) lines.push(`  ${o}`);
  lines.push("", "Example:", `  ${h.example}`, "", `More: ${h.docs}`, "");
  return lines.join("\n");
}
