/**
 * `scoot setup` end to end: the built CLI without a terminal (it reads the token on stdin), read
 * back through `scoot config` run in this process (`runInProcess`).
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, runCli, runInProcess, tempDir } from "../helpers/cli.js";

let root: string;
let home: string;
beforeEach(() => {
  root = tempDir("scoot-setup-e2e-");
  // Not created yet: setup makes the home tree itself.
  home = path.join(root, "nested", "home");
});
afterEach(() => removeDir(root));

const TOKEN = "sk-e2etoken0123456789abcdef";
const flags = [
  "--yes",
  "--base-url",
  "https://llm.example.com/v1",
  "--model",
  "gpt-e2e",
  "--api",
  "responses",
  "--token-source",
  "file",
  "--token-stdin",
  "--policy",
  "readonly",
];

function setup(args: string[], input?: string) {
  return runCli(["setup", ...args], { home, cwd: root, input });
}

function configJson(env: Record<string, string> = {}) {
  return runInProcess(["config", "--json"], { home, cwd: root, env });
}

/** Every file under the home, with its bytes. */
function snapshot(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const name of fs.readdirSync(dir)) {
      const p = path.join(dir, name);
      // V8's compile cache (Node 22.8+) is no part of the configuration setup may not change.
      if (path.relative(home, p) === path.join("state", "compile-cache")) continue;
      if (fs.statSync(p).isDirectory()) walk(p);
      else out[path.relative(home, p)] = fs.readFileSync(p, "utf8");
    }
  };
  walk(home);
  return out;
}

describe("setup --yes", () => {
  it("writes a config that scoot config reads back, and the token only into the 0600 file", async () => {
    const r = await setup(flags, `${TOKEN}\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`wrote ${path.join(home, "config.toml")}`);
    expect(r.stdout).toContain(`wrote the token to ${path.join(home, "token")} (mode 0600)`);
    expect(r.stdout + r.stderr).not.toContain(TOKEN);

    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
    for (const d of ["logs", "state", "skills"])
      expect(fs.statSync(path.join(home, d)).mode & 0o777).toBe(0o700);
    const tokenFile = path.join(home, "token");
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(tokenFile, "utf8").trim()).toBe(TOKEN);
    const files = snapshot();
    for (const [name, text] of Object.entries(files))
      if (name !== "token") expect(text, name).not.toContain(TOKEN);

    // An unrelated OPENAI_API_KEY in the shell is not used: the file source was chosen.
    const c = await configJson({ OPENAI_API_KEY: "sk-shellkey0123456789" });
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toBe("");
    const shown = JSON.parse(c.stdout);
    expect(shown.config_file).toBe(path.join(home, "config.toml"));
    expect(shown.token_source).toBe("file");
    expect(shown.config.backend).toMatchObject({
      base_url: "https://llm.example.com/v1",
      model: "gpt-e2e",
      api: "responses",
      api_key_env: "",
    });
    expect(shown.config.tools.policy).toBe("readonly");
    // Everything not given keeps its default.
    expect(shown.config.agent.max_turns).toBe(32);
    expect(c.stdout).not.toContain(TOKEN);
  });

  it.each([
    ["http://127.0.0.1:11434/v1", "none"],
    ["http://localhost:8080/v1", "none"],
    ["https://llm.example.com/v1", "env"],
  ])("without --token-source, %s gets the source the terminal offers: %s", async (url, source) => {
    const r = await setup([
      "--yes",
      "--base-url",
      url,
      "--model",
      "m",
      "--api",
      "chat",
      "--policy",
      "guarded",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const c = await configJson({ OPENAI_API_KEY: "sk-shellkey0123456789" });
    expect(JSON.parse(c.stdout).token_source).toBe(source);
  });

  it("refuses to replace an existing config without --force (exit 2, nothing changed); --force replaces it", async () => {
    expect((await setup(flags, `${TOKEN}\n`)).code).toBe(0);
    const before = snapshot();
    const again = await setup(
      ["--yes", "--base-url", "http://127.0.0.1:9/v1", "--token-source", "file", "--token-stdin"],
      "sk-othertoken0123456789\n",
    );
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /a configuration already exists at .*config\.toml; pass --force to replace it \(nothing changed\)/,
    );
    expect(snapshot()).toEqual(before);

    const forced = await setup([
      "--yes",
      "--force",
      "--base-url",
      "http://127.0.0.1:9/v1",
      "--token-source",
      "env",
      "--token-env",
      "MY_LLM_KEY",
    ]);
    expect(forced.code, forced.stderr).toBe(0);
    const shown = JSON.parse((await configJson({ MY_LLM_KEY: "sk-fromenv0123456789" })).stdout);
    expect(shown.config.backend).toMatchObject({
      base_url: "http://127.0.0.1:9/v1",
      api_key_env: "MY_LLM_KEY",
      model: "qwen2.5",
    });
    expect(shown.token_source).toBe("env");
  });

  it("writes the token command, never a token, for the cmd source", async () => {
    // The command's output is not spelled out in the command, so `config` (which redacts the
    // resolved token everywhere) shows the command as written.
    const cmd = "printf %s%s tok-from- cmd-123";
    const r = await setup(["--yes", "--token-source", "cmd", "--token-cmd", cmd]);
    expect(r.code, r.stderr).toBe(0);
    const shown = JSON.parse((await configJson()).stdout);
    expect(shown.config.backend).toMatchObject({ api_key_cmd: cmd, api_key_env: "" });
    expect(shown.token_source).toBe("cmd");
    expect(fs.existsSync(path.join(home, "token"))).toBe(false);
  });

  it.each<[string, string[], RegExp]>([
    ["an unknown api", ["--api", "soap"], /--api: unknown api "soap"/],
    [
      "a bad URL",
      ["--base-url", "llm.example.com"],
      /--base-url: "llm\.example\.com" does not start with http:\/\/ or https:\/\/; write it as http:\/\/llm\.example\.com\/v1/,
    ],
    ["an unknown policy", ["--policy", "loose"], /--policy: unknown policy "loose"/],
    ["an unknown token source", ["--token-source", "vault"], /--token-source: unknown token source "vault"/],
    [
      "a token inside the command",
      ["--token-cmd", "echo sk-abcdefghijklmnopqrst"],
      /appears to contain a credential/,
    ],
    [
      "--token-env with the file source",
      ["--token-source", "file", "--token-env", "X"],
      /--token-env only applies to --token-source env/,
    ],
    [
      "--token-stdin with the env source",
      ["--token-source", "env", "--token-stdin"],
      /--token-stdin only applies to --token-source file/,
    ],
    ["cmd without a command", ["--token-source", "cmd"], /--token-source cmd needs --token-cmd CMD/],
    ["an empty token on stdin", ["--token-stdin"], /--token-stdin: the token is empty/],
  ])("refuses %s with exit 2 and writes nothing", async (_name, args, message) => {
    const r = await setup(["--yes", ...args], "");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(fs.existsSync(path.join(home, "config.toml"))).toBe(false);
    expect(fs.existsSync(path.join(home, "token"))).toBe(false);
  });
});

describe("setup without a terminal and without --yes", () => {
  it("exits 2 naming the flags to pass, and creates nothing", async () => {
    const r = await setup([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no terminal to ask questions on; pass --yes with the values/);
    expect(r.stderr).toContain("--base-url");
    expect(r.stderr).toContain("--token-source");
    expect(fs.existsSync(home)).toBe(false);
  });
});
