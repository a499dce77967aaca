/**
 * Redaction: the one function every writer of text passes through (sessions, audit,
 * trace, error text, config/doctor output). Secrets are known values (the resolved
 * token, secret-named environment variables) plus common credential shapes.
 */

import { isSecretName } from "./secret-names.js";

export const REDACTED = "[REDACTED]";

/** Shorter values are too likely to collide with ordinary text to be redacted by value. */
const MIN_SECRET_VALUE_LENGTH = 6;

/** Environment variable names whose values are secrets (besides the shared rule in secret-names.ts). */
const SECRET_ENV_NAME = /(_KEY|_TOKEN|_SECRET)$|PASSWORD/i;

/** The keys of a `;`-separated connection string (Azure, ADO.NET, ODBC) whose value is a secret. */
const CONNECTION_SECRET_KEYS =
  "AccountKey|SharedAccessKey|SharedAccessSignature|AccessKey|ClientSecret|Secret|Password|Passwd|Pwd";

const CREDENTIAL_SHAPES: RegExp[] = [
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\bsk-[A-Za-z0-9_-]{8,}/g,
  /\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{16,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\b(AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  // Only the value, and only inside a `;`-separated list (after a `;`, or before one), so
  // `pwd=$(pwd)` in a script is left alone while `…;AccountKey=…;…` is not.
  new RegExp(`(?<=;\\s*(?:${CONNECTION_SECRET_KEYS})\\s*=\\s*)[^;\\s"']+`, "gi"),
  new RegExp(`(?<=(?:^|[^A-Za-z0-9_])(?:${CONNECTION_SECRET_KEYS})\\s*=\\s*)[^;\\s"']+(?=\\s*;)`, "gi"),
];

/**
 * Text ending like this may be the start of a credential shape that goes on past white space
 * (the two shapes above that contain white space): a stream must not be cut right after it.
 */
const OPEN_SHAPE_TAILS: RegExp[] = [
  /\bBearer\s+$/i,
  /-----BEGIN [A-Z0-9 ]*$/,
  // A connection string's next key, or a secret key's value, may follow a space after `;` or `=`:
  // held, so the piece after the cut still shows the `;` that marks it as a connection string.
  /;\s+$/,
  new RegExp(`(?:${CONNECTION_SECRET_KEYS})\\s*=\\s+$`, "i"),
];

const knownSecrets = new Set<string>();
let secretsSorted: string[] = [];

/** Adds a value that must never appear in any text artifact. */
export function registerSecret(value: string | undefined): void {
  if (!value) return;
  const v = value.trim();
  if (v.length < MIN_SECRET_VALUE_LENGTH || knownSecrets.has(v)) return;
  knownSecrets.add(v);
  // Longest first so a secret that contains another is replaced whole.
  secretsSorted = [...knownSecrets].sort((a, b) => b.length - a.length);
}

/**
 * Registers the values of secret-named variables: `*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`
 * and every name the sandbox's scrub calls secret (`BW_SESSION`, `LDAP_BIND_PW`, …).
 */
export function registerSecretEnv(env: NodeJS.ProcessEnv): void {
  for (const [name, value] of Object.entries(env)) {
    if (value && (SECRET_ENV_NAME.test(name) || isSecretName(name))) registerSecret(value);
  }
}

export function redact(text: string): string {
  let out = text;
  // Shapes first: a known value inside a longer credential must not leave the rest readable.
  for (const shape of CREDENTIAL_SHAPES) {
    shape.lastIndex = 0;
    out = out.replace(shape, REDACTED);
  }
  for (const secret of secretsSorted) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** Where credentials lie in `text`: every shape match and every registered value, as [start, end). */
export function credentialSpans(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  for (const shape of CREDENTIAL_SHAPES) {
    for (const m of text.matchAll(shape)) spans.push([m.index, m.index + m[0].length]);
  }
  for (const secret of secretsSorted) {
    for (let i = text.indexOf(secret); i >= 0; i = text.indexOf(secret, i + 1))
      spans.push([i, i + secret.length]);
  }
  return spans;
}

/** Registered values that contain white space: the only ones a cut at white space can split. */
export function spacedSecrets(): readonly string[] {
  return secretsSorted.filter((s) => /\s/.test(s));
}

/** Where an unfinished multi-word credential starts at the end of `text`, if one may. */
export function openShapeStart(text: string): number | undefined {
  for (const tail of OPEN_SHAPE_TAILS) {
    const m = tail.exec(text);
    if (m) return m.index;
  }
  return undefined;
}

/** For tests: forget registered values. */
export function resetSecretsForTest(): void {
  knownSecrets.clear();
  secretsSorted = [];
}
