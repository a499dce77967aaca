/**
 * The configuration is declared once (src/config/schema.ts with the builders of
 * src/config/declare.ts). This walks the declaration and proves that what loading, the
 * environment overlay and `scoot setup` do comes from it: every key has a type, a default, an
 * environment variable and a check; setup's flags, questions and answer checks are the declared
 * ones; and a bad value of each kind gets the declared message.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import { parseArgs } from "../../src/cli/args.js";
import type { Cli } from "../../src/cli/context.js";
import { setupCommand } from "../../src/cli/setup.js";
import type { KeyKind, KeySpec } from "../../src/config/declare.js";
import { loadConfig } from "../../src/config/load.js";
import { type Config, defaultConfig, SCHEMA, TOKEN_SOURCE_QUESTION } from "../../src/config/schema.js";

const KEYS: KeySpec[] = Object.values(SCHEMA).flatMap((keys) => Object.values(keys) as KeySpec[]);
const KINDS: KeyKind["type"][] = ["string", "int", "bool", "enum", "policy", "string[]", "object", "table[]"];

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-declared-"));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/** A value of the key's type (and one its own check takes), as an environment string would carry it. */
function envSample(spec: KeySpec): string {
  const kind = spec.kind;
  switch (kind.type) {
    case "string":
      return spec.dotted === "backend.base_url" ? "http://declared-sample:8080/v1" : "declared-sample";
    case "int":
      return String(kind.max);
    case "bool":
      return "on";
    case "enum":
      return kind.values[kind.values.length - 1]!;
    case "policy":
      return "unrestricted";
    case "string[]":
      return "a, b";
    case "object":
      return '{"k": 1}';
    case "table[]":
      return '[{"k": 1}]';
  }
}

/** A value of the wrong type for the kind, as a config.json would hold it. */
function wrongTyped(kind: KeyKind): unknown {
  switch (kind.type) {
    case "string":
    case "enum":
    case "policy":
    case "object":
      return 7;
    case "int":
      return "7";
    case "bool":
      return "yes";
    case "string[]":
      return [1, 2];
    case "table[]":
      return ["not a table"];
  }
}

function describeWrong(value: unknown): string {
  if (typeof value === "number") return `an integer (${value})`;
  if (typeof value === "string") return `a string ("${value}")`;
  return "a list";
}

describe("every key is fully declared", () => {
  it("the walk covers every section and key of the defaults, and every kind", () => {
    const fromDefaults = Object.entries(defaultConfig()).flatMap(([s, body]) =>
      Object.keys(body).map((k) => `${s}.${k}`),
    );
    const declared = KEYS.map((k) => k.dotted);
    // The defaults hold exactly the non-optional keys, in declaration order.
    expect(fromDefaults).toEqual(KEYS.filter((k) => !k.optional).map((k) => k.dotted));
    expect(new Set(declared).size).toBe(declared.length);
    expect(declared.length).toBeGreaterThan(50);
    expect(new Set(KEYS.map((k) => k.kind.type))).toEqual(new Set(KINDS));
  });

  it.each(KEYS.map((k) => [k.dotted, k] as const))(
    "%s has type, default, env name, doc and checks",
    (dotted, spec) => {
      const [section, name] = dotted.split(".") as [string, string];
      expect(KINDS).toContain(spec.kind.type);
      expect(spec.env).toBe(`SCOOT_${section.toUpperCase()}_${name.toUpperCase()}`);
      expect(spec.doc.trim()).not.toBe("");
      expect(spec.expects.trim()).not.toBe("");
      expect(typeof spec.check).toBe("function");
      expect(typeof spec.parseEnv).toBe("function");
      if (spec.optional) {
        expect(spec.default).toBeUndefined();
      } else {
        // The default passes the key's own check unchanged.
        expect(spec.check(spec.default, dotted)).toEqual({ ok: true, value: spec.default });
      }
    },
  );

  it.each(KEYS.filter((k) => k.fileOnly).map((k) => [k.env, k] as const))(
    "%s is never read: the key comes from the config file only, and the warning says why",
    (env, spec) => {
      const loaded = loadConfig(root, { [env]: envSample(spec) });
      expect(loaded.ok && loaded.value.fromEnv).toEqual([]);
      expect(loaded.ok && loaded.value.warnings).toEqual([`${env} ignored: ${spec.fileOnly}`]);
    },
  );

  it.each(KEYS.filter((k) => !k.fileOnly).map((k) => [k.env, k] as const))(
    "%s is the variable the loader reads",
    (env, spec) => {
      const loaded = loadConfig(root, { [env]: envSample(spec) });
      expect(loaded.ok).toBe(true);
      if (!loaded.ok) return;
      expect(loaded.value.fromEnv).toEqual([spec.dotted]);
      const [section, name] = spec.dotted.split(".") as [string, string];
      const value = (loaded.value.config as unknown as Record<string, Record<string, unknown>>)[section]![
        name
      ];
      const parsed = spec.parseEnv(envSample(spec));
      if (!parsed.ok) throw new Error(parsed.error);
      const checked = spec.check(parsed.value, spec.dotted);
      expect(checked.ok).toBe(true);
      if (checked.ok === true) expect(value).toEqual(checked.value);
    },
  );

  it("the Config type is read off the declaration", () => {
    expectTypeOf<Config["backend"]["api"]>().toEqualTypeOf<"chat" | "responses">();
    expectTypeOf<Config["backend"]["api_key_file"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Config["tools"]["approval"]>().toEqualTypeOf<"ask" | "never" | undefined>();
    expectTypeOf<Config["tools"]["policy"]>().toEqualTypeOf<"readonly" | "guarded" | "unrestricted">();
    expectTypeOf<Config["agent"]["max_turns"]>().toEqualTypeOf<number>();
    expectTypeOf<Config["skills"]["extra_paths"]>().toEqualTypeOf<string[]>();
    expectTypeOf<Config["backend"]["extra_body"]>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<Config["mcp"]["servers"]>().toEqualTypeOf<Record<string, unknown>[]>();
    expectTypeOf<keyof Config>().toEqualTypeOf<keyof typeof SCHEMA>();
    // A runtime anchor so this case fails if the declaration loses a section.
    expect(Object.keys(SCHEMA)).toEqual(Object.keys(defaultConfig()));
  });
});

describe("a bad value of each kind gets the declared message", () => {
  function loadJson(doc: unknown) {
    const file = path.join(root, "config.json");
    fs.writeFileSync(file, JSON.stringify(doc));
    return { file, loaded: loadConfig(root, {}) };
  }

  it.each(KEYS.map((k) => [k.dotted, k] as const))("%s: a wrong-typed value in the file", (dotted, spec) => {
    const [section, name] = dotted.split(".") as [string, string];
    const bad = wrongTyped(spec.kind);
    const { file, loaded } = loadJson({ [section]: { [name]: bad } });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    expect(loaded.error.message).toBe(
      `${file}: ${dotted}: expected ${spec.expects}, got ${describeWrong(bad)}`,
    );
  });

  it.each(KEYS.filter((k) => k.kind.type === "int").map((k) => [k.dotted, k] as const))(
    "%s: an integer out of range names the declared range",
    (dotted, spec) => {
      const kind = spec.kind as { min: number; max: number };
      const [section, name] = dotted.split(".") as [string, string];
      const { file, loaded } = loadJson({ [section]: { [name]: kind.max + 1 } });
      expect(!loaded.ok && loaded.error.message).toBe(
        `${file}: ${dotted}: must be in ${kind.min}..${kind.max}, got ${kind.max + 1}`,
      );
      fs.rmSync(file);
      const fromEnv = loadConfig(root, { [spec.env]: String(kind.min - 1) });
      expect(fromEnv.ok && fromEnv.value.warnings).toEqual([
        `${spec.env} ignored: must be in ${kind.min}..${kind.max}, got ${kind.min - 1}`,
      ]);
    },
  );

  it.each(KEYS.filter((k) => k.kind.type === "enum").map((k) => [k.dotted, k] as const))(
    "%s: an unknown choice lists the declared choices",
    (dotted, spec) => {
      const values = (spec.kind as { values: readonly string[] }).values;
      const [section, name] = dotted.split(".") as [string, string];
      const { file, loaded } = loadJson({ [section]: { [name]: "nope" } });
      expect(!loaded.ok && loaded.error.message).toBe(
        `${file}: ${dotted}: "nope" is not one of ${values.join(", ")}`,
      );
    },
  );

  it.each(KEYS.filter((k) => k.kind.type === "policy").map((k) => [k.dotted, k] as const))(
    "%s: an unknown policy becomes readonly in the file and is ignored in the environment",
    (dotted, spec) => {
      const [section, name] = dotted.split(".") as [string, string];
      const { file, loaded } = loadJson({ [section]: { [name]: "loose" } });
      expect(loaded.ok && loaded.value.warnings).toEqual([
        `${file}: ${dotted}: unknown policy "loose"; using "readonly" (valid: readonly, guarded, unrestricted, yolo)`,
      ]);
      fs.rmSync(file);
      const fromEnv = loadConfig(root, { [spec.env]: "loose" });
      expect(fromEnv.ok && fromEnv.value.warnings).toEqual([
        `${spec.env} ignored: unknown policy "loose"; keeping "${String(spec.default)}" (valid: readonly, guarded, unrestricted, yolo)`,
      ]);
    },
  );

  it.each(
    KEYS.filter((k) => ["int", "bool", "object", "table[]"].includes(k.kind.type)).map(
      (k) => [k.env, k] as const,
    ),
  )("%s: an unparsable environment value is ignored with the declared reason", (env, spec) => {
    const loaded = loadConfig(root, { [env]: "{not json or number" });
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    const parsed = spec.parseEnv("{not json or number");
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(loaded.value.warnings).toEqual([`${env} ignored: ${parsed.error}`]);
    expect(loaded.value.fromEnv).toEqual([]);
  });
});

describe("setup's questions come from the declaration", () => {
  const asked = KEYS.filter((k) => k.setup !== undefined);

  it("exactly the keys setup writes carry a question, each with its own flag", () => {
    expect(asked.map((k) => k.dotted).sort()).toEqual(
      [
        "backend.api",
        "backend.api_key_cmd",
        "backend.api_key_env",
        "backend.base_url",
        "backend.model",
        "tools.policy",
      ].sort(),
    );
    const flags = [...asked.map((k) => k.setup!.flag), TOKEN_SOURCE_QUESTION.flag];
    expect(new Set(flags).size).toBe(flags.length);
    for (const flag of flags) {
      // Each declared flag is one the argument parser knows to take a value.
      const parsed = parseArgs(["setup", `--${flag}`, "x"]);
      expect(parsed.ok && parsed.value.flags[flag], flag).toBe("x");
    }
  });

  it("the choices in a question are the key's declared values", () => {
    const apis = (SCHEMA.backend.api.kind as { values: readonly string[] }).values;
    expect(SCHEMA.backend.api.setup!.question).toContain(apis.join(" or "));
    for (const v of ["chat", "responses"])
      expect(SCHEMA.backend.api.setup!.answer(v)).toEqual({ ok: true, value: v });
    for (const v of ["readonly", "guarded", "unrestricted"]) {
      expect(SCHEMA.tools.policy.setup!.question).toContain(v);
      expect(SCHEMA.tools.policy.setup!.answer(v)).toEqual({ ok: true, value: v });
    }
  });

  function cli(argv: string[]) {
    const parsed = parseArgs(argv);
    if (!parsed.ok) throw new Error(parsed.error);
    const err: string[] = [];
    const c: Cli = {
      args: parsed.value,
      env: { SCOOT_HOME: path.join(root, "home") },
      cwd: root,
      io: { out: () => {}, err: (t) => err.push(t) },
    };
    return { cli: c, err };
  }

  /** A bad text for each question and the flag it goes to. */
  const BAD: [string, string][] = [
    ["base-url", "ftp://example.com/v1"],
    ["api", "soap"],
    ["model", " "],
    ["token-source", "vault"],
    ["token-env", "2KEY"],
    ["token-cmd", "echo sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"],
    ["policy", "loose"],
  ];

  it.each(BAD)("--%s with a bad value is refused with the declared answer's message", async (flag, bad) => {
    const question = [...asked.map((k) => k.setup!), TOKEN_SOURCE_QUESTION].find((q) => q.flag === flag)!;
    const declared = question.answer(bad);
    expect(declared.ok).toBe(false);
    if (declared.ok) return;
    const c = cli(["--yes", `--${flag}`, bad]);
    const code = await setupCommand(c.cli, {
      stdin: new PassThrough(),
      prompts: new PassThrough(),
      isTTY: false,
    });
    expect(code).toBe(2);
    expect(c.err.join("")).toBe(`scoot setup: --${flag}: ${declared.error}\n`);
    expect(fs.existsSync(path.join(root, "home"))).toBe(false);
  });

  it("on a terminal, each question asked is the declared text, in order", async () => {
    const c = cli(["--base-url", "http://127.0.0.1:9/v1"]);
    const stdin = new PassThrough();
    const prompts = new PassThrough();
    let shown = "";
    prompts.on("data", (d) => {
      shown += d;
    });
    // url, api, model, token source env, its variable, policy, and no to the final write.
    stdin.end(["", "", "", "env", "", "", "n"].map((a) => `${a}\n`).join(""));
    const code = await setupCommand(c.cli, { stdin, prompts, isTTY: true, terminal: false });
    expect(code, c.err.join("")).toBe(0);
    const questions = [
      SCHEMA.backend.base_url,
      SCHEMA.backend.api,
      SCHEMA.backend.model,
      { setup: TOKEN_SOURCE_QUESTION },
      SCHEMA.backend.api_key_env,
      SCHEMA.tools.policy,
    ].map((k) => k.setup!.question);
    let at = 0;
    for (const q of questions) {
      const found = shown.indexOf(`${q} [`, at);
      expect(found, `${q} after offset ${at} in:\n${shown}`).toBeGreaterThanOrEqual(0);
      at = found + q.length;
    }
    expect(fs.existsSync(path.join(root, "home", "config.toml"))).toBe(false);
  });
});
