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

/**
 * White space a multi-word credential shape may hold between its parts, and the length of a PEM
 * label ("RSA ", "ENCRYPTED ", "OPENSSH "): bounded, so a stream knows how much text can still be
 * the unfinished start of a credential (docs/context.md "Streaming"). No real header or key
 * file comes near either bound.
 */
export const SHAPE_GAP_MAX = 64;
const PEM_LABEL_MAX = 64;
const GAP = `\\s{0,${SHAPE_GAP_MAX}}`;
const GAP1 = `\\s{1,${SHAPE_GAP_MAX}}`;
const PEM_LABEL = `[A-Z0-9 ]{0,${PEM_LABEL_MAX}}`;

/**
 * A credential shape, and where a match of it that runs to the end of the text would end in the
 * text that follows: `end` finds the first character that is no longer part of it (for a PEM
 * block: its END line, which is). A stream that has held a credential too long redacts it
 * whole and drops what follows up to that end.
 */
interface Shape {
  pattern: RegExp;
  end: RegExp;
  endIncluded?: true;
  /**
   * A character no match can be found without: text that lacks it is not searched. The
   * connection-string shapes' look-behinds are tried at every position, the slowest search here
   * (about 9 ms over a 5,000-row `sessions list`), and most text holds no `;`.
   */
  needs?: string;
}

const CREDENTIAL_SHAPES: Shape[] = [
  {
    pattern: new RegExp(
      `-----BEGIN ${PEM_LABEL}PRIVATE KEY-----[\\s\\S]*?(-----END ${PEM_LABEL}PRIVATE KEY-----|$)`,
      "g",
    ),
    end: new RegExp(`-----END ${PEM_LABEL}PRIVATE KEY-----`),
    endIncluded: true,
  },
  { pattern: new RegExp(`\\bBearer${GAP1}[A-Za-z0-9._~+/=-]{8,}`, "gi"), end: /[^A-Za-z0-9._~+/=-]/ },
  { pattern: /\bsk-[A-Za-z0-9_-]{8,}/g, end: /[^A-Za-z0-9_-]/ },
  { pattern: /\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{16,}/g, end: /[^A-Za-z0-9]/ },
  { pattern: /\bgithub_pat_[A-Za-z0-9_]{20,}/g, end: /[^A-Za-z0-9_]/ },
  // Twenty characters at most: never held long enough to need an end.
  { pattern: /\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, end: /(?:)/ },
  { pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, end: /[^A-Za-z0-9-]/ },
  // Only the value, and only inside a `;`-separated list (after a `;`, or before one), so
  // `pwd=$(pwd)` in a script is left alone while `…;AccountKey=…;…` is not.
  {
    pattern: new RegExp(`(?<=;${GAP}(?:${CONNECTION_SECRET_KEYS})${GAP}=${GAP})[^;\\s"']+`, "gi"),
    end: /[;\s"']/,
    needs: ";",
  },
  {
    pattern: new RegExp(
      `(?<=(?:^|[^A-Za-z0-9_])(?:${CONNECTION_SECRET_KEYS})${GAP}=${GAP})[^;\\s"']+(?=${GAP};)`,
      "gi",
    ),
    end: /[;\s"']/,
    needs: ";",
  },
];

/** Whether `shape` can match anywhere in `text`. */
function mayHold(text: string, shape: Shape): boolean {
  return shape.needs === undefined || text.includes(shape.needs);
}

/**
 * A connection-string value at the end of the text that a later `;` would make a secret (the
 * last shape above, before its `;` has come).
 */
const PENDING_VALUE = new RegExp(
  `(?<=(?:^|[^A-Za-z0-9_])(?:${CONNECTION_SECRET_KEYS})${GAP}=${GAP})[^;\\s"']+${GAP}$`,
  "i",
);

/**
 * Text ending like this may be the start of a credential shape that goes on past white space
 * (the two shapes above that contain white space): a stream must not be cut right after it.
 */
const OPEN_SHAPE_TAILS: RegExp[] = [
  new RegExp(`\\bBearer${GAP1}$`, "i"),
  new RegExp(`-----BEGIN ${PEM_LABEL}$`),
  // A connection string's next key, or a secret key's value, may follow a space after `;` or `=`:
  // held, so the piece after the cut still shows the `;` that marks it as a connection string.
  new RegExp(`;${GAP1}$`),
  new RegExp(`(?:${CONNECTION_SECRET_KEYS})${GAP}=${GAP1}$`, "i"),
];

/**
 * The most text before a credential that decides whether it is one (the `;`, key and `=` of a
 * connection-string value, with their white space).
 */
export const SHAPE_CONTEXT_MAX_CHARS = 2 + "SharedAccessSignature".length + 3 * SHAPE_GAP_MAX;

/** The longest text an open tail above can match: only that much before a cut is looked at. */
const OPEN_TAIL_MAX_CHARS = "-----BEGIN ".length + PEM_LABEL_MAX + 3 * SHAPE_GAP_MAX + 64;

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
    if (!mayHold(out, shape)) continue;
    shape.pattern.lastIndex = 0;
    out = out.replace(shape.pattern, REDACTED);
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
    if (!mayHold(text, shape)) continue;
    for (const m of text.matchAll(shape.pattern)) spans.push([m.index, m.index + m[0].length]);
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

/**
 * Where an unfinished multi-word credential starts at the end of `text.slice(0, end)`, if one
 * may. Only the last OPEN_TAIL_MAX_CHARS before `end` are looked at, so a stream asking about
 * every place it could cut pays for each one a bounded price.
 */
export function openShapeStart(text: string, end: number = text.length): number | undefined {
  const from = Math.max(0, end - OPEN_TAIL_MAX_CHARS);
  const window = text.slice(from, end);
  for (const tail of OPEN_SHAPE_TAILS) {
    const m = tail.exec(window);
    if (m) return from + m.index;
  }
  return undefined;
}

/** The length of the longest registered value (a stream holds back at least that much). */
export function longestSecret(): number {
  return secretsSorted[0]?.length ?? 0;
}

/** One credential match running to the end of a text: where it starts, and how its end is found. */
export interface RunningEnd {
  start: number;
  end: RegExp;
  endIncluded: boolean;
}

/**
 * The credential shapes whose match runs to the end of `text` and could go on (a token still
 * being written, a PEM block without its END line, a connection-string value before its `;`):
 * the earliest start, and for each such match where it would end in text that follows.
 * Undefined when none does.
 */
export function runningCredential(text: string): { start: number; ends: RunningEnd[] } | undefined {
  // Every match that runs to the end counts: what follows is redacted until all of them ended.
  let start = text.length;
  const ends: RunningEnd[] = [];
  const add = (s: number, end: RegExp, endIncluded: boolean) => {
    start = Math.min(start, s);
    ends.push({ start: s, end, endIncluded });
  };
  for (const { pattern, end, endIncluded } of CREDENTIAL_SHAPES) {
    for (const m of text.matchAll(pattern))
      if (m.index + m[0].length === text.length) add(m.index, end, endIncluded === true);
  }
  const pending = PENDING_VALUE.exec(text);
  if (pending) add(pending.index, /[;\s"']/, false);
  return ends.length > 0 ? { start, ends } : undefined;
}

/** For tests: forget registered values. */
export function resetSecretsForTest(): void {
  knownSecrets.clear();
  secretsSorted = [];
}
