/**
 * The environment a sandboxed command gets (docs/safety.md "Shell containment", "What is
 * protected"): a command can print its environment as easily as a file, so Scoot's own
 * token variable, every variable that looks like it holds a secret (by its name, or by its
 * value: a URL with userinfo, a connection string with a password or key), and every variable
 * that points at a host socket are dropped. `tools.env_passthrough` names the ones to keep anyway
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

/**
 * The keys of a connection string whose value is a secret: ADO.NET, ODBC, JDBC-style and
 * libpq-style passwords (`Password`, `Pwd`, `Passwd`), Azure Storage (`AccountKey`,
 * `SharedAccessSignature`), Service Bus and Event Hubs (`SharedAccessKey`), SignalR and
 * Communication Services (`AccessKey`), App Configuration (`Secret`) and Entra ID service
 * principals (`ClientSecret`). The redactor (src/core/redact.ts) replaces the first five in text.
 */
export const CONNECTION_SECRET_KEYS: readonly string[] = [
  "Password",
  "Pwd",
  "Passwd",
  "AccountKey",
  "SharedAccessKey",
  "SharedAccessSignature",
  "AccessKey",
  "Secret",
  "ClientSecret",
];

/**
 * A value holding one of those keys with a non-empty value, in any case: the key starts the
 * value or follows a `;` or a line break, with optional white space around it and the `=`
 * (`Server=db;User Id=u;Password=p`, `host=db; pwd =p`, `user=u\npassword=p`). A key inside a
 * word or a path (`SharedAccessKeyName=`, `/srv/pwd=x`, `the Password= field`) is none.
 */
const CONNECTION_STRING_SECRET = new RegExp(
  `(?:^|[;\\r\\n])[ \\t]*(?:${CONNECTION_SECRET_KEYS.join("|")})[ \\t]*=[ \\t]*[^;\\s]`,
  "i",
);

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
    shown: `the value is a connection string holding ${CONNECTION_SECRET_KEYS.map((k) => `${k}=`).join(", ")} (any case, at the start or after ; or a line break)`,
    why: "a password or key in a connection string under any name (APP_CONN, X1); only redacting it in output would leave it readable reversed",
    matches: (_name, value) => CONNECTION_STRING_SECRET.test(value),
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
