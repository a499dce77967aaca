/**
 * The environment a sandboxed command gets (docs/safety.md "Shell containment", "What is
 * protected"): a command can print its environment as easily as a file, so Scoot's own
 * token variable, every variable that looks like it holds a secret, and every variable that
 * points at a host socket are dropped. `tools.env_passthrough` names the ones to keep anyway
 * (never the backend token).
 *
 * Which names are secret is decided in src/core/secret-names.ts, which the redactor shares.
 * One table, ENV_SCRUB_RULES, is the whole rule set; README lists the same rows
 * (test/sandbox/protected-places.test.ts keeps the two in step).
 */

import {
  hasSecretSubstring,
  hasSecretWord,
  ORDINARY_NAMES,
  SECRET_NAME_SUBSTRINGS,
  SECRET_NAME_WORDS,
  SECRET_NAMES,
} from "../core/secret-names.js";

export interface EnvRule {
  /** How the README shows the rule. */
  shown: string;
  why: string;
  matches(name: string, value: string): boolean;
}

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
  "SESSION_MANAGER",
];

/** A value that is a URL with a user or password in it (`postgres://u:pw@db/x`). */
const URL_WITH_USERINFO = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#\s]*@/;

export const ENV_SCRUB_RULES: readonly EnvRule[] = [
  {
    shown: `name contains ${SECRET_NAME_SUBSTRINGS.join(", ")}`,
    why: "API keys, tokens, passwords",
    matches: (name) => hasSecretSubstring(name),
  },
  {
    shown: `a word of the name (split at _) is ${SECRET_NAME_WORDS.join(", ")}; or the name is ${SECRET_NAMES.join(", ")} (kept: ${ORDINARY_NAMES.join(", ")})`,
    why: "passwords, personal access tokens, JWTs, DSNs, webhooks, auth configs, cookies, password-manager sessions, connection strings",
    matches: (name) => hasSecretWord(name),
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
