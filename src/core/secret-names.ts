/**
 * Which environment variable names hold a secret, decided once for both places that ask: the
 * sandbox's environment scrub (src/sandbox/env.ts drops them) and the redactor (src/core/redact.ts
 * registers their values). A name is secret when it contains one of the substrings, when one of
 * its words (split at `_`) is a secret word, or when it is one of the secret names spelled out;
 * the ordinary names below are kept although a word rule would catch them.
 */

/** Substrings that make a name secret wherever they stand (any case): `MY_APIKEY`, `GITHUB_TOKEN`. */
export const SECRET_NAME_SUBSTRINGS: readonly string[] = [
  "KEY",
  "TOKEN",
  "SECRET",
  "PASSWORD",
  "PASSWD",
  "PASSPHRASE",
  "CREDENTIAL",
];

/**
 * Whole words of a name split at `_` (any case): `GH_PAT`, `DB_PWD`, `SENTRY_DSN`, `BW_SESSION`,
 * `OP_SESSION_my`, `LDAP_BIND_PW`, `AZURE_STORAGE_CONNECTION_STRING`, but not `PATH`, `PWNED`
 * or `SESSIONS_DIR`, whose words are different.
 */
export const SECRET_NAME_WORDS: readonly string[] = [
  "PASS",
  "PASSWORD",
  "PWD",
  "PW",
  "PAT",
  "JWT",
  "DSN",
  "WEBHOOK",
  "AUTH",
  "COOKIE",
  "PRIVATE",
  "SESSION",
  "CONNECTION",
];

/** Secret names no word rule catches: sshpass's password variable. */
export const SECRET_NAMES: readonly string[] = ["SSHPASS"];

/**
 * Names a word rule would catch that are not secrets: the shell's working directories, the
 * desktop session's description (tools read it to pick a clipboard or a display backend) and
 * the ssh connection's addresses. `SESSION_MANAGER` and `DBUS_SESSION_BUS_ADDRESS` are not here:
 * they point at host sockets and are dropped for that.
 */
export const ORDINARY_NAMES: readonly string[] = [
  "PWD",
  "OLDPWD",
  "XDG_SESSION_TYPE",
  "XDG_SESSION_CLASS",
  "XDG_SESSION_DESKTOP",
  "XDG_SESSION_ID",
  "DESKTOP_SESSION",
  "KDE_SESSION_VERSION",
  "KDE_SESSION_UID",
  "SSH_CONNECTION",
];

function words(name: string): string[] {
  return name
    .toUpperCase()
    .split("_")
    .filter((w) => w !== "");
}

/** Whether a name contains a secret substring (any case). */
export function hasSecretSubstring(name: string): boolean {
  const upper = name.toUpperCase();
  return SECRET_NAME_SUBSTRINGS.some((s) => upper.includes(s));
}

/** Whether a word of the name is a secret word, or the name is a spelled-out secret name. */
export function hasSecretWord(name: string): boolean {
  if (ORDINARY_NAMES.includes(name)) return false;
  if (SECRET_NAMES.includes(name.toUpperCase())) return true;
  return words(name).some((w) => SECRET_NAME_WORDS.includes(w));
}

/** Whether the variable's name says its value is a secret. */
export function isSecretName(name: string): boolean {
  return hasSecretSubstring(name) || hasSecretWord(name);
}
