/**
 * `scoot setup`: writes `<home>/config.toml`, interactively on a terminal or entirely from
 * flags with `--yes`.
 *
 * - Only the keys setup decides are written ([backend] api, base_url, model and the token
 *   source keys; [tools] policy); everything else keeps its default, and the file is read back
 *   through the real loader before setup reports success.
 * - A token never goes into the config. A pasted token (or `--token-stdin`) goes only to the
 *   token file, created 0600 from its first byte and replaced atomically.
 * - Choosing a token source makes it the only one that can apply to the environment variable:
 *   for `file`, `cmd` and `none`, `api_key_env` is written empty, so an unrelated
 *   `OPENAI_API_KEY` in the shell is never sent to the configured backend.
 * - An existing configuration (config.toml or config.json) or token file is replaced only
 *   after a yes on the terminal, or with `--force`; without it nothing is changed (exit 2).
 */
import fs from "node:fs";
import { createInterface } from "node:readline/promises";
import { type Readable, Writable } from "node:stream";
import type { TokenSourceChoice } from "../config/answers.js";
import type { SetupQuestion } from "../config/declare.js";
import { ensureDir, ensureHome, type HomePaths, resolveHomePaths } from "../config/home.js";
import { loadConfig } from "../config/load.js";
import {
  type BackendApi,
  type Config,
  defaultConfig,
  type PolicyMode,
  SCHEMA,
  TOKEN_SOURCE_QUESTION,
} from "../config/schema.js";
import { atomicWriteFile } from "../core/atomic-write.js";
import type { Result } from "../core/types.js";
import { flagBool, flagString, type ParsedArgs } from "./args.js";
import type { Cli } from "./context.js";
import { EXIT, terminalWrapWidth } from "./io.js";
import { wrapText } from "./view/wrap.js";

const TOKEN_FILE_MODE = 0o600;
const CONFIG_FILE_MODE = 0o600;
/** Same limit the token reader applies: a longer "token" is a whole file pasted by mistake. */
const MAX_TOKEN_BYTES = 16 * 1024;
/** Wrong answers on the terminal before setup gives up. */
const MAX_ATTEMPTS = 3;

export interface SetupValues {
  baseUrl: string;
  model: string;
  api: BackendApi;
  tokenSource: TokenSourceChoice;
  /** For `env`: the variable name. */
  tokenEnv?: string;
  /** For `cmd`: the command. */
  tokenCmd?: string;
  policy: PolicyMode;
}

const USAGE_HINT =
  "pass --yes with the values, e.g.\n" +
  "  scoot setup --yes --base-url http://127.0.0.1:11434/v1 --model qwen2.5 --api chat \\\n" +
  "    --token-source env --token-env OPENAI_API_KEY --policy guarded\n" +
  "  (--token-source file --token-stdin reads a token from stdin into the 0600 token file;\n" +
  "   --token-source cmd --token-cmd CMD runs CMD for the token; --force replaces an existing config)";

// ---- validation ---------------------------------------------------------------------------

/** A key setup asks about carries its question in its declaration; one without it is a wiring mistake. */
function asked<T>(spec: { dotted: string; setup?: SetupQuestion<T> }): SetupQuestion<T> {
  if (!spec.setup) throw new Error(`${spec.dotted} is declared without a setup question`);
  return spec.setup;
}

/** What setup asks, each question (flag, text, answer check) taken from the declaration. */
const ASK = {
  baseUrl: asked(SCHEMA.backend.base_url),
  api: asked(SCHEMA.backend.api),
  model: asked(SCHEMA.backend.model),
  tokenSource: TOKEN_SOURCE_QUESTION,
  tokenEnv: asked(SCHEMA.backend.api_key_env),
  tokenCmd: asked(SCHEMA.backend.api_key_cmd),
  policy: asked(SCHEMA.tools.policy),
} as const;

export const validateBaseUrl = ASK.baseUrl.answer;
export const validateModel = ASK.model.answer;
export const validateApi = ASK.api.answer;
export const validatePolicy = ASK.policy.answer;
export const validateTokenSource = ASK.tokenSource.answer;
export const validateEnvName = ASK.tokenEnv.answer;
export const validateTokenCmd = ASK.tokenCmd.answer;

/** The token itself is no key: it goes only to the 0600 token file. */
export function validateToken(text: string): Result<string> {
  const v = text.trim();
  if (v === "") return { ok: false, error: "the token is empty" };
  if (Buffer.byteLength(v) > MAX_TOKEN_BYTES) return { ok: false, error: "the token is larger than 16 KiB" };
  if (/[\r\n]/.test(v)) return { ok: false, error: "the token must be a single line" };
  return { ok: true, value: v };
}

// ---- the file -----------------------------------------------------------------------------

/** A TOML basic string: JSON's escapes are TOML's, except that DEL must be escaped too. */
function tomlString(s: string): string {
  return JSON.stringify(s).replace(/\u007f/g, "\\u007F");
}

export function renderConfig(v: SetupValues, when = new Date()): string {
  const lines = [
    `# Written by \`scoot setup\` on ${when.toISOString()}.`,
    "# Keys not listed keep their defaults (see `scoot config`).",
    "# No token is ever stored in this file.",
    "",
    "[backend]",
    `api = ${tomlString(v.api)}`,
    `base_url = ${tomlString(v.baseUrl)}`,
    `model = ${tomlString(v.model)}`,
  ];
  switch (v.tokenSource) {
    case "env":
      lines.push(`api_key_env = ${tomlString(v.tokenEnv ?? defaultConfig().backend.api_key_env)}`);
      break;
    case "file":
      lines.push('api_key_env = ""  # token from the token file only');
      break;
    case "cmd":
      lines.push('api_key_env = ""  # token from api_key_cmd (a token file, if present, is read first)');
      lines.push(`api_key_cmd = ${tomlString(v.tokenCmd ?? "")}`);
      break;
    case "none":
      lines.push('api_key_env = ""  # no token (local backend)');
      break;
  }
  lines.push("", "[tools]", `policy = ${tomlString(v.policy)}`, "");
  return lines.join("\n");
}

/** Reads the written file back through the real loader: what setup says is what Scoot loads. */
export function verifyConfig(root: string, v: SetupValues): Result<true> {
  const loaded = loadConfig(root, {});
  if (!loaded.ok) return { ok: false, error: `the written config does not load: ${loaded.error.message}` };
  const c = loaded.value.config;
  const expected: [string, unknown, unknown][] = [
    ["backend.api", c.backend.api, v.api],
    ["backend.base_url", c.backend.base_url, v.baseUrl],
    ["backend.model", c.backend.model, v.model],
    ["tools.policy", c.tools.policy, v.policy],
    [
      "backend.api_key_env",
      c.backend.api_key_env,
      v.tokenSource === "env" ? (v.tokenEnv ?? SCHEMA.backend.api_key_env.default) : "",
    ],
    ["backend.api_key_cmd", c.backend.api_key_cmd, v.tokenSource === "cmd" ? v.tokenCmd : undefined],
  ];
  for (const [key, got, want] of expected) {
    if (got !== want)
      return {
        ok: false,
        error: `the written config loads ${key} = ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`,
      };
  }
  if (loaded.value.warnings.length > 0) {
    return {
      ok: false,
      error: `the written config loads with warnings: ${loaded.value.warnings.join("; ")}`,
    };
  }
  return { ok: true, value: true };
}

function existingConfig(paths: HomePaths): string | undefined {
  return [paths.configToml, paths.configJson].find((f) => fs.existsSync(f));
}

// ---- flags --------------------------------------------------------------------------------

interface FromFlags {
  values: Partial<SetupValues>;
  tokenStdin: boolean;
}

function valuesFromFlags(args: ParsedArgs): Result<FromFlags> {
  const values: Partial<SetupValues> = {};
  const take = <T>(q: SetupQuestion<T>, set: (v: T) => void): string | undefined => {
    const raw = flagString(args, q.flag);
    if (raw === undefined) return undefined;
    const r = q.answer(raw);
    if (!r.ok) return `--${q.flag}: ${r.error}`;
    set(r.value);
    return undefined;
  };
  const errors = [
    take(ASK.baseUrl, (v) => {
      values.baseUrl = v;
    }),
    take(ASK.model, (v) => {
      values.model = v;
    }),
    take(ASK.api, (v) => {
      values.api = v;
    }),
    take(ASK.policy, (v) => {
      values.policy = v;
    }),
    take(ASK.tokenSource, (v) => {
      values.tokenSource = v;
    }),
    take(ASK.tokenEnv, (v) => {
      values.tokenEnv = v;
    }),
    take(ASK.tokenCmd, (v) => {
      values.tokenCmd = v;
    }),
  ].filter((e): e is string => e !== undefined);
  if (errors.length > 0) return { ok: false, error: errors.join("\n") };
  const tokenStdin = flagBool(args, "token-stdin");
  // Without --token-source, the token flags say which source is meant.
  if (values.tokenSource === undefined) {
    const implied = [
      values.tokenEnv !== undefined ? "env" : undefined,
      values.tokenCmd !== undefined ? "cmd" : undefined,
      tokenStdin ? "file" : undefined,
    ].filter((s): s is TokenSourceChoice => s !== undefined);
    if (implied.length > 1)
      return {
        ok: false,
        error: "--token-env, --token-cmd and --token-stdin belong to different token sources; pick one",
      };
    if (implied.length === 1) values.tokenSource = implied[0];
  }
  const src = values.tokenSource;
  if (values.tokenEnv !== undefined && src !== "env")
    return { ok: false, error: `--token-env only applies to --token-source env (got ${src})` };
  if (values.tokenCmd !== undefined && src !== "cmd")
    return { ok: false, error: `--token-cmd only applies to --token-source cmd (got ${src})` };
  if (tokenStdin && src !== "file")
    return { ok: false, error: `--token-stdin only applies to --token-source file (got ${src})` };
  return { ok: true, value: { values, tokenStdin } };
}

function withDefaults(v: Partial<SetupValues>): SetupValues {
  const d = defaultConfig();
  const baseUrl = v.baseUrl ?? d.backend.base_url;
  // As on the terminal: a server on this machine needs no token, so none is sent (not even a
  // stray OPENAI_API_KEY); any other server reads the environment variable.
  const tokenSource = v.tokenSource ?? (isLocalUrl(baseUrl) ? "none" : "env");
  return {
    baseUrl,
    model: v.model ?? d.backend.model,
    api: v.api ?? d.backend.api,
    tokenSource,
    ...(tokenSource === "env" ? { tokenEnv: v.tokenEnv ?? d.backend.api_key_env } : {}),
    ...(tokenSource === "cmd" && v.tokenCmd !== undefined ? { tokenCmd: v.tokenCmd } : {}),
    policy: v.policy ?? d.tools.policy,
  };
}

async function readAll(input: Readable, limit: number): Promise<Result<string>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    const b = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > limit)
      return { ok: false, error: `more than ${limit} bytes on stdin; a token is one short line` };
    chunks.push(b);
  }
  return { ok: true, value: Buffer.concat(chunks).toString("utf8") };
}

// ---- the terminal -------------------------------------------------------------------------

export interface Prompter {
  /** The answer line, or undefined when the input ended or the user pressed Ctrl-C. */
  ask(question: string, opts?: { hidden?: boolean }): Promise<string | undefined>;
  /** Whether the input ended by Ctrl-C (as opposed to end of input). */
  interrupted(): boolean;
  close(): void;
}

/**
 * Questions go to `output` (stderr: stdout keeps only the result). Lines are read through the
 * interface's queue, so answers typed ahead are never lost. A hidden answer is not echoed.
 */
export function createPrompter(
  input: Readable,
  output: Writable,
  terminal: boolean,
  /** The terminal's width, which questions wrap at (docs/keyboard.md "Lines on a terminal"). */
  width?: number,
): Prompter {
  // Keys are echoed only while a visible question waits. A line typed or pasted ahead of its
  // question is never shown as it arrives — it might be the token — and is printed after its
  // question instead, unless that question is the hidden one.
  let asking = false;
  let hidden = false;
  const echo = new Writable({
    write(chunk, _enc, cb) {
      if (asking && !hidden) output.write(chunk);
      cb();
    },
  });
  const rl = createInterface({ input, output: echo, terminal, prompt: "" });
  const shownLive: boolean[] = [];
  rl.on("line", () => {
    shownLive.push(terminal && asking && !hidden);
    // The question has its answer: whatever is typed from here on is ahead of the next one.
    asking = false;
  });
  let interrupted = false;
  rl.on("SIGINT", () => {
    interrupted = true;
    rl.close();
  });
  const lines = rl[Symbol.asyncIterator]();
  return {
    async ask(question, opts = {}) {
      output.write(width === undefined ? question : wrapText(question, width));
      hidden = opts.hidden === true;
      asking = true;
      try {
        const r = await lines.next();
        if (r.done) return undefined;
        const wasShown = shownLive.shift() ?? false;
        if (hidden) output.write("\n");
        else if (terminal && !wasShown) output.write(`${r.value}\n`);
        return r.value;
      } finally {
        asking = false;
        hidden = false;
      }
    },
    interrupted: () => interrupted,
    close: () => rl.close(),
  };
}

class Cancelled extends Error {}

/** How long setup waits for the server's model list before asking without it. */
const SETUP_PROBE_TIMEOUT_MS = 3_000;
/** At most this many listed models are offered by number. */
const SETUP_MODELS_SHOWN = 20;

/** The models the server lists (without a token: it is asked later), or none when it cannot say. */
async function listedModels(backend: Config["backend"]): Promise<string[]> {
  const { probeBackendInfo } = await import("../backend/probe.js");
  const r = await probeBackendInfo(backend, undefined, SETUP_PROBE_TIMEOUT_MS);
  return r.ok ? r.value.ids : [];
}

async function askValid<T>(
  p: Prompter,
  out: Writable,
  question: string,
  fallback: string | undefined,
  validate: (s: string) => Result<T>,
  opts: { hidden?: boolean } = {},
): Promise<T> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const shown = fallback !== undefined && !opts.hidden ? ` [${fallback}]` : "";
    const answer = await p.ask(`${question}${shown}: `, opts);
    if (answer === undefined) throw new Cancelled();
    const text = answer.trim() === "" && fallback !== undefined ? fallback : answer;
    const r = validate(text);
    if (r.ok) return r.value;
    out.write(`  ${r.error}\n`);
  }
  throw new Error(`no valid answer after ${MAX_ATTEMPTS} tries`);
}

async function confirm(p: Prompter, out: Writable, question: string, dflt: boolean): Promise<boolean> {
  return askValid(p, out, `${question} ${dflt ? "[Y/n]" : "[y/N]"}`, undefined, (s) => {
    const v = s.trim().toLowerCase();
    if (v === "") return { ok: true, value: dflt };
    if (["y", "yes"].includes(v)) return { ok: true, value: true };
    if (["n", "no"].includes(v)) return { ok: true, value: false };
    return { ok: false, error: "answer y or n" };
  });
}

function isLocalUrl(url: string): boolean {
  try {
    const h = new URL(url).hostname;
    return h === "localhost" || h === "127.0.0.1" || h === "[::1]" || h === "::1";
  } catch {
    return false;
  }
}

interface Plan {
  values: SetupValues;
  token?: string;
}

/**
 * Asks for each value, offering the flag value or the default. Returns undefined when the user
 * declines. `file` shows the file to be written as it will be (not wrapped, unlike `out`).
 */
async function askAll(
  p: Prompter,
  out: Writable,
  paths: HomePaths,
  given: Partial<SetupValues>,
  force: boolean,
  file: Writable = out,
): Promise<Plan | undefined> {
  const d = defaultConfig();
  out.write(`Scoot setup — writes ${paths.configToml}. Press Enter to accept [defaults].\n`);
  const existing = existingConfig(paths);
  if (
    existing &&
    !force &&
    !(await confirm(p, out, `A configuration already exists at ${existing}. Replace it?`, false))
  ) {
    return undefined;
  }
  const baseUrl = await askValid(
    p,
    out,
    ASK.baseUrl.question,
    given.baseUrl ?? d.backend.base_url,
    ASK.baseUrl.answer,
  );
  const api = await askValid(p, out, ASK.api.question, given.api ?? d.backend.api, ASK.api.answer);
  const listed = await listedModels({ ...d.backend, base_url: baseUrl, api });
  if (listed.length > 0) {
    out.write(`The server lists ${listed.length} model${listed.length === 1 ? "" : "s"}:\n`);
    for (const [i, m] of listed.slice(0, SETUP_MODELS_SHOWN).entries()) out.write(`  ${i + 1}) ${m}\n`);
    if (listed.length > SETUP_MODELS_SHOWN) out.write(`  … and ${listed.length - SETUP_MODELS_SHOWN} more\n`);
  }
  const suggested =
    given.model ?? (listed.length === 0 || listed.includes(d.backend.model) ? d.backend.model : listed[0]!);
  const model = await askValid(
    p,
    out,
    listed.length > 0 ? `${ASK.model.question} (or its number above)` : ASK.model.question,
    suggested,
    (text) => {
      const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : 0;
      return n >= 1 && n <= Math.min(listed.length, SETUP_MODELS_SHOWN)
        ? { ok: true, value: listed[n - 1]! }
        : ASK.model.answer(text);
    },
  );
  const tokenSource = await askValid(
    p,
    out,
    ASK.tokenSource.question,
    given.tokenSource ?? (isLocalUrl(baseUrl) ? "none" : "env"),
    ASK.tokenSource.answer,
  );
  const values: SetupValues = { baseUrl, api, model, tokenSource, policy: "guarded" };
  let token: string | undefined;
  if (tokenSource === "env") {
    values.tokenEnv = await askValid(
      p,
      out,
      ASK.tokenEnv.question,
      given.tokenEnv ?? d.backend.api_key_env,
      ASK.tokenEnv.answer,
    );
  } else if (tokenSource === "cmd") {
    values.tokenCmd = await askValid(p, out, ASK.tokenCmd.question, given.tokenCmd, ASK.tokenCmd.answer);
  } else if (tokenSource === "file") {
    const exists = fs.existsSync(paths.token);
    const pasted = await askValid(
      p,
      out,
      exists
        ? `Paste a new token (hidden; Enter keeps ${paths.token})`
        : `Paste the token (hidden; Enter to skip and fill ${paths.token} later)`,
      "",
      (s) => (s.trim() === "" ? { ok: true, value: "" } : validateToken(s)),
      { hidden: true },
    );
    if (pasted !== "") token = pasted;
  }
  values.policy = await askValid(
    p,
    out,
    ASK.policy.question,
    given.policy ?? d.tools.policy,
    ASK.policy.answer,
  );
  file.write(`\n${renderConfig(values)}\n`);
  if (
    !(await confirm(
      p,
      out,
      `Write ${paths.configToml}${token ? ` and the token file ${paths.token}` : ""}?`,
      true,
    ))
  )
    return undefined;
  return { values, ...(token ? { token } : {}) };
}

// ---- the command --------------------------------------------------------------------------

export interface SetupStreams {
  stdin: Readable;
  /** Where questions go. */
  prompts: Writable;
  /** Whether stdin is a terminal: decides interactive or flags-only. */
  isTTY: boolean;
  /** Whether readline treats stdin as a terminal (raw keys, hidden echo); default: isTTY. */
  terminal?: boolean;
  /**
   * The width questions and notes wrap at when `prompts` is a terminal (docs/keyboard.md "Lines
   * on a terminal"); undefined: as written.
   */
  width?: number;
}

/** Lines written to `out` wrapped at `width`: each write starts a line (what setup writes does). */
function wrappedLines(out: Writable, width: number | undefined): Writable {
  if (width === undefined) return out;
  return new Writable({
    write(chunk, _enc, cb) {
      out.write(wrapText(String(chunk), width));
      cb();
    },
  });
}

function writeFiles(paths: HomePaths, plan: Plan): Result<string[]> {
  ensureHome(paths);
  ensureDir(paths.skills);
  ensureDir(paths.state);
  const done: string[] = [];
  const cfg = atomicWriteFile(paths.configToml, renderConfig(plan.values), { mode: CONFIG_FILE_MODE });
  if (!cfg.ok) return { ok: false, error: `cannot write ${paths.configToml}: ${cfg.error}` };
  done.push(`wrote ${paths.configToml}`);
  if (plan.token !== undefined) {
    const tok = atomicWriteFile(paths.token, `${plan.token}\n`, { mode: TOKEN_FILE_MODE });
    if (!tok.ok) return { ok: false, error: `cannot write the token file ${paths.token}: ${tok.error}` };
    done.push(`wrote the token to ${paths.token} (mode 0600)`);
  }
  return { ok: true, value: done };
}

function tokenLine(paths: HomePaths, plan: Plan): string {
  const v = plan.values;
  switch (v.tokenSource) {
    case "env":
      return `token: read from the environment variable ${v.tokenEnv}`;
    case "file":
      return plan.token !== undefined || fs.existsSync(paths.token)
        ? `token: read from ${paths.token}`
        : `token: put it in ${paths.token} (one line; chmod 600 ${paths.token})`;
    case "cmd":
      return `token: printed by ${JSON.stringify(v.tokenCmd)}`;
    case "none":
      return "token: none (no Authorization header is sent)";
  }
}

export async function setupCommand(cli: Cli, streams: SetupStreams): Promise<number> {
  if (cli.args.words.length > 0) {
    cli.io.err(`scoot setup: unexpected argument "${cli.args.words[0]}"\n`);
    return EXIT.usage;
  }
  const flags = valuesFromFlags(cli.args);
  if (!flags.ok) {
    cli.io.err(`scoot setup: ${flags.error.split("\n").join("\nscoot setup: ")}\n`);
    return EXIT.usage;
  }
  const yes = flagBool(cli.args, "yes");
  const force = flagBool(cli.args, "force");
  const paths = resolveHomePaths(flagString(cli.args, "scoot-home"), cli.env);

  let plan: Plan;
  if (!yes) {
    if (!streams.isTTY) {
      cli.io.err(`scoot setup: no terminal to ask questions on; ${USAGE_HINT}\n`);
      return EXIT.usage;
    }
    if (flags.value.tokenStdin) {
      cli.io.err("scoot setup: --token-stdin needs --yes (on a terminal, setup asks for the token)\n");
      return EXIT.usage;
    }
    const prompter = createPrompter(
      streams.stdin,
      streams.prompts,
      streams.terminal ?? streams.isTTY,
      streams.width,
    );
    try {
      const asked = await askAll(
        prompter,
        wrappedLines(streams.prompts, streams.width),
        paths,
        flags.value.values,
        force,
        streams.prompts,
      );
      if (!asked) {
        cli.io.err("scoot setup: nothing changed\n");
        return EXIT.ok;
      }
      plan = asked;
    } catch (e) {
      if (e instanceof Cancelled) {
        cli.io.err("\nscoot setup: cancelled; nothing changed\n");
        return prompter.interrupted() ? EXIT.interrupted : EXIT.failed;
      }
      cli.io.err(`scoot setup: ${(e as Error).message}; nothing changed\n`);
      return EXIT.usage;
    } finally {
      prompter.close();
    }
  } else {
    const values = withDefaults(flags.value.values);
    if (values.tokenSource === "cmd" && values.tokenCmd === undefined) {
      cli.io.err("scoot setup: --token-source cmd needs --token-cmd CMD\n");
      return EXIT.usage;
    }
    const existing = existingConfig(paths);
    if (existing && !force) {
      cli.io.err(
        `scoot setup: a configuration already exists at ${existing}; pass --force to replace it (nothing changed)\n`,
      );
      return EXIT.usage;
    }
    let token: string | undefined;
    if (flags.value.tokenStdin) {
      const read = await readAll(streams.stdin, MAX_TOKEN_BYTES + 2);
      const valid = read.ok ? validateToken(read.value) : read;
      if (!valid.ok) {
        cli.io.err(`scoot setup: --token-stdin: ${valid.error} (nothing changed)\n`);
        return EXIT.usage;
      }
      token = valid.value;
      if (fs.existsSync(paths.token) && !force) {
        cli.io.err(
          `scoot setup: a token file already exists at ${paths.token}; pass --force to replace it (nothing changed)\n`,
        );
        return EXIT.usage;
      }
    }
    plan = { values, ...(token !== undefined ? { token } : {}) };
  }

  const written = writeFiles(paths, plan);
  if (!written.ok) {
    cli.io.err(`scoot setup: ${written.error}\n`);
    return EXIT.failed;
  }
  const verified = verifyConfig(paths.configDir, plan.values);
  if (!verified.ok) {
    cli.io.err(`scoot setup: ${verified.error}\n`);
    return EXIT.failed;
  }
  if (plan.values.tokenSource === "cmd" && fs.existsSync(paths.token)) {
    cli.io.err(
      `scoot: warning: ${paths.token} exists and is read before api_key_cmd; remove it to use the command\n`,
    );
  }
  if (fs.existsSync(paths.configJson)) {
    cli.io.err(`scoot: warning: ${paths.configJson} is no longer read: ${paths.configToml} comes first\n`);
  }
  if (plan.values.policy === "unrestricted") {
    cli.io.err(
      "scoot: warning: tools.policy = unrestricted: the model's shell commands, writes and requests are not screened\n",
    );
  }
  const lines = [...written.value, tokenLine(paths, plan), "next: scoot doctor"];
  cli.io.out(`${lines.join("\n")}\n`);
  return EXIT.ok;
}

export async function runSetup(cli: Cli): Promise<number> {
  return setupCommand(cli, {
    stdin: process.stdin,
    prompts: process.stderr,
    isTTY: Boolean(process.stdin.isTTY),
    width: terminalWrapWidth(process.stderr),
  });
}
