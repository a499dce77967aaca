/**
 * The environment a sandboxed command gets (docs/safety.md "Shell containment", "What is
 * protected"): a command can print its environment as easily as a file, so Scoot's own
 * token variable, every variable that looks like it holds a secret, and every variable that
 * points at a host socket are dropped. `tools.env_passthrough` names the ones to keep anyway
 * (never the backend token).
 *
 * One table, ENV_SCRUB_RULES, is the whole rule set; README lists the same rows
 * (test/sandbox/protected-places.test.ts keeps the two in step).
 */

export interface EnvRule {
  /** How the README shows the rule. */
  shown: string;
  why: string;
  matches(name: string, value: string): boolean;
}

/** Substrings that make a name secret wherever they stand (any case): `MY_APIKEY`, `GITHUB_TOKEN`. */
export const SECRET_NAME_SUBSTRINGS: readonly string[] = [
  "KEY",
  "TOKEN",
  "SECRET",
  "PASSWORD",
  "PASSWD",
  "CREDENTIAL",
];

/**
 * Whole words of a name split at `_` (any case): `GH_PAT`, `DB_PWD`, `SENTRY_DSN`, but not
 * `PATH`, `PWD` or `OLDPWD`, whose words are different or which are the shell's own.
 */
export const SECRET_NAME_WORDS: readonly string[] = [
  "PASS",
  "PASSWORD",
  "PWD",
  "PAT",
  "JWT",
  "DSN",
  "WEBHOOK",
  "AUTH",
  "COOKIE",
  "PRIVATE",
];

/** The shell's own variables that a word rule would otherwise catch. */
const SHELL_OWN: ReadonlySet<string> = new Set(["PWD", "OLDPWD"]);

/** Variables that point at a host socket (agents, buses, displays, container engines). */
export const SOCKET_VARIABLES: readonly string[] = [
  "SSH_AUTH_SOCK",
  "SSH_AGENT_PID",
  "DBUS_SESSION_BUS_ADDRESS",
  "DBUS_SYSTEM_BUS_ADDRESS",
  "TMUX",
  "TMUX_PANE",
  "STY",
  "GPG_AGENT_INFO",
  "WAYLAND_DISPLAY",
  "DISPLAY",
  "XAUTHORITY",
  "DOCKER_HOST",
  "CONTAINER_HOST",
  "XDG_RUNTIME_DIR",
];

/** A value that is a URL with a user or password in it (`postgres://u:pw@db/x`). */
const URL_WITH_USERINFO = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#\s]*@/;

function words(name: string): string[] {
  return name
    .toUpperCase()
    .split("_")
    .filter((w) => w !== "");
}

export const ENV_SCRUB_RULES: readonly EnvRule[] = [
  {
    shown: `name contains ${SECRET_NAME_SUBSTRINGS.join(", ")}`,
    why: "API keys, tokens, passwords",
    matches: (name) => SECRET_NAME_SUBSTRINGS.some((s) => name.toUpperCase().includes(s)),
  },
  {
    shown: `a word of the name (split at _) is ${SECRET_NAME_WORDS.join(", ")}`,
    why: "passwords, personal access tokens, JWTs, DSNs, webhooks, auth configs, cookies",
    matches: (name) => !SHELL_OWN.has(name) && words(name).some((w) => SECRET_NAME_WORDS.includes(w)),
  },
  {
    shown: "the value is a URL with userinfo (scheme://user:pass@host)",
    why: "DATABASE_URL and friends carry the password in the URL",
    matches: (_name, value) => URL_WITH_USERINFO.test(value.trim()),
  },
  {
    shown: SOCKET_VARIABLES.join(", "),
    why: "they point at host sockets (agents, buses, displays, container engines)",
    matches: (name) => SOCKET_VARIABLES.includes(name),
  },
];

export interface ScrubResult {
  env: NodeJS.ProcessEnv;
  /** Names dropped, sorted (for the trace; never their values). */
  dropped: string[];
}

export function scrubEnv(
  env: NodeJS.ProcessEnv,
  opts: { tokenVar?: string; passthrough: readonly string[] },
): ScrubResult {
  const keep = new Set(opts.passthrough);
  const out: NodeJS.ProcessEnv = {};
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const isToken = name === opts.tokenVar;
    const secret = isToken || ENV_SCRUB_RULES.some((r) => r.matches(name, value));
    // The backend token is never passed through, whatever the list says.
    if (secret && (isToken || !keep.has(name))) dropped.push(name);
    else out[name] = value;
  }
  return { env: out, dropped: dropped.sort() };
}
