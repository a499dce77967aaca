/** `scoot setup` in process: value checks, the written file's round trip, and the terminal dialogue. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseArgs } from "../../src/cli/args.js";
import type { Cli } from "../../src/cli/context.js";
import {
  renderConfig,
  type SetupValues,
  setupCommand,
  validateApi,
  validateBaseUrl,
  validateEnvName,
  validatePolicy,
  validateToken,
  validateTokenCmd,
  validateTokenSource,
  verifyConfig,
} from "../../src/cli/setup.js";
import { loadConfig } from "../../src/config/load.js";

let root: string;
let home: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "scoot-setup-"));
  home = path.join(root, "home");
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe("values are checked with a clear error", () => {
  it.each<[string, (s: string) => { ok: boolean; error?: string }, string, RegExp | true]>([
    ["url ok", validateBaseUrl, "https://api.example.com/v1", true],
    ["url local", validateBaseUrl, "http://127.0.0.1:11434/v1", true],
    [
      "url not a url",
      validateBaseUrl,
      "api.example.com",
      /"api\.example\.com" does not start with http:\/\/ or https:\/\//,
    ],
    ["url empty", validateBaseUrl, " ", /empty/],
    ["url wrong scheme", validateBaseUrl, "ftp://x/v1", /http:\/\/ or https:\/\//],
    ["url with userinfo", validateBaseUrl, "https://me:pw@api.example.com/v1", /must not carry credentials/],
    [
      "url with a key in it",
      validateBaseUrl,
      "https://api.example.com/v1?key=sk-abcdefghijklmnop",
      /appears to contain a credential/,
    ],
    ["api chat", validateApi, "chat", true],
    ["api responses", validateApi, "Responses", true],
    ["api unknown", validateApi, "soap", /unknown api "soap" \(use chat or responses\)/],
    ["policy yolo", validatePolicy, "yolo", true],
    ["policy unknown", validatePolicy, "loose", /unknown policy "loose"/],
    ["source cmd", validateTokenSource, "cmd", true],
    ["source unknown", validateTokenSource, "vault", /use env, file, cmd or none/],
    ["env name", validateEnvName, "MY_KEY_2", true],
    ["env name bad", validateEnvName, "2KEY", /not an environment variable name/],
    ["cmd ok", validateTokenCmd, "pass show openai", true],
    [
      "cmd with a token inside",
      validateTokenCmd,
      "echo sk-abcdefghijklmnopqrst",
      /appears to contain a credential/,
    ],
    ["token two lines", validateToken, "abc\ndef", /single line/],
    ["token empty", validateToken, "  ", /empty/],
  ])("%s", (_name, validate, input, expected) => {
    const r = validate(input);
    if (expected === true) expect(r.ok).toBe(true);
    else {
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(expected);
    }
  });
});

describe("the written config loads back exactly", () => {
  const base = {
    baseUrl: "https://h.example/v1",
    model: 'm "quoted" \\ x',
    api: "responses",
    policy: "readonly",
  } as const;
  it.each<[string, SetupValues, Record<string, unknown>]>([
    ["env", { ...base, tokenSource: "env", tokenEnv: "MY_KEY" }, { api_key_env: "MY_KEY" }],
    ["file", { ...base, tokenSource: "file" }, { api_key_env: "" }],
    [
      "cmd",
      { ...base, tokenSource: "cmd", tokenCmd: "pass show 'x'" },
      { api_key_env: "", api_key_cmd: "pass show 'x'" },
    ],
    ["none", { ...base, tokenSource: "none" }, { api_key_env: "" }],
  ])("token source %s", (_name, values, backend) => {
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(path.join(home, "config.toml"), renderConfig(values));
    expect(verifyConfig(home, values)).toEqual({ ok: true, value: true });
    const loaded = loadConfig(home, {});
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.value.warnings).toEqual([]);
    expect(loaded.value.config.backend).toMatchObject({
      base_url: base.baseUrl,
      model: base.model,
      api: "responses",
      ...backend,
    });
    expect(loaded.value.config.backend.api_key_cmd).toBe(
      values.tokenSource === "cmd" ? values.tokenCmd : undefined,
    );
    expect(loaded.value.config.tools.policy).toBe("readonly");
  });
});

function cli(argv: string[]) {
  const parsed = parseArgs(argv);
  if (!parsed.ok) throw new Error(parsed.error);
  const out: string[] = [];
  const err: string[] = [];
  const c: Cli = {
    args: parsed.value,
    env: { SCOOT_HOME: home },
    cwd: root,
    io: { out: (t) => out.push(t), err: (t) => err.push(t) },
  };
  return { cli: c, out, err };
}

/** Runs setup as if on a terminal, with every answer typed ahead. */
async function dialogue(answers: string[], argv: string[] = []) {
  const c = cli(["setup", ...argv].slice(1));
  const stdin = new PassThrough();
  const prompts = new PassThrough();
  let shown = "";
  prompts.on("data", (d) => {
    shown += d;
  });
  stdin.end(answers.map((a) => `${a}\n`).join(""));
  const code = await setupCommand(c.cli, { stdin, prompts, isTTY: true, terminal: false });
  return { code, shown, out: c.out.join(""), err: c.err.join("") };
}

describe("on a terminal, setup asks", () => {
  const token = "sk-pastedtoken1234567890";

  it("asks every value, re-asks a bad one, and writes the token only to the 0600 file", async () => {
    const r = await dialogue([
      "not a url",
      "https://api.example.com/v1",
      "", // api: default chat
      "gpt-test",
      "file",
      token,
      "guarded",
      "y",
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.shown).toMatch(/"not a url" is not an http:\/\/ or https:\/\/ URL/);
    const config = fs.readFileSync(path.join(home, "config.toml"), "utf8");
    expect(config).not.toContain(token);
    expect(config).toContain('base_url = "https://api.example.com/v1"');
    expect(config).toContain('model = "gpt-test"');
    const tokenFile = path.join(home, "token");
    expect(fs.readFileSync(tokenFile, "utf8")).toBe(`${token}\n`);
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
    expect(r.shown).not.toContain(token);
    expect(r.out).toContain(`wrote ${path.join(home, "config.toml")}`);
  });

  it("asks before replacing an existing config; no keeps it untouched", async () => {
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(path.join(home, "config.toml"), "# mine\n");
    const r = await dialogue(["n"]);
    expect(r.code).toBe(0);
    expect(r.shown).toMatch(/A configuration already exists at .*config\.toml\. Replace it\? \[y\/N\]/);
    expect(r.err).toMatch(/nothing changed/);
    expect(fs.readFileSync(path.join(home, "config.toml"), "utf8")).toBe("# mine\n");
  });

  it("declining the final confirmation writes nothing", async () => {
    const r = await dialogue(["", "", "", "none", "", "n"]);
    expect(r.code).toBe(0);
    expect(fs.existsSync(path.join(home, "config.toml"))).toBe(false);
  });

  it("flags given on a terminal become the offered defaults", async () => {
    const r = await dialogue(
      ["", "", "", "", "", "", "y"],
      ["--base-url", "http://10.0.0.5:8000/v1", "--model", "qwen3"],
    );
    expect(r.code, r.err).toBe(0);
    expect(r.shown).toContain("[http://10.0.0.5:8000/v1]");
    const loaded = loadConfig(home, {});
    expect(loaded.ok && loaded.value.config.backend.model).toBe("qwen3");
    // A non-local URL defaults to the env token source.
    expect(loaded.ok && loaded.value.config.backend.api_key_env).toBe("OPENAI_API_KEY");
  });

  it("input ending mid-dialogue cancels with nothing written", async () => {
    const r = await dialogue(["https://api.example.com/v1"]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/cancelled; nothing changed/);
    expect(fs.existsSync(home)).toBe(false);
  });
});
