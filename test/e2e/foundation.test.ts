/**
 * The foundation commands in temporary homes. Each table's first case and every command's first
 * test run the real built CLI; the rest run the same routing in process (test/helpers/cli.ts
 * runInProcess): what they check is the command's logic, not the process around it.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { removeDir, runCli, runInProcess, tempDir } from "../helpers/cli.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/scripted-server.js";

let home: string;
let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedServer([]);
});
afterAll(async () => server.close());
beforeEach(() => {
  home = tempDir();
});
afterEach(() => removeDir(home));

const write = (name: string, text: string) => fs.writeFileSync(path.join(home, name), text);

/**
 * For a table of cases: the first case that runs (the table's first row) uses the built binary,
 * the others the same routing in process.
 */
function binaryFirst(): typeof runInProcess {
  let usedBinary = false;
  return (args, opts) => {
    if (usedBinary) return runInProcess(args, opts);
    usedBinary = true;
    return runCli(args, opts);
  };
}

describe("basic flags", () => {
  it("-v prints the version", async () => {
    const r = await runCli(["-v"], { home });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^scoot \d+\.\d+\.\d+\n$/);
  });
  it("-h prints usage with every command", async () => {
    const r = await runCli(["-h"], { home });
    expect(r.code).toBe(0);
    for (const c of [
      "config",
      "doctor",
      "policy check",
      "sessions list",
      "session show",
      "audit show",
      "serve",
      "setup",
    ]) {
      expect(r.stdout).toContain(c);
    }
  });
  const usageRun = binaryFirst();
  it.each([
    [["sesions"], /unknown command "sesions"; did you mean scoot sessions/],
    [["--nope"], /unknown option --nope/],
    [["-e"], /needs a value/],
    [["--session-id", "../x", "-e", "hi"], /invalid session id/],
    [["--policy", "sloppy", "-e", "hi"], /unknown policy "sloppy"/],
    [["--retries", "many", "-e", "hi"], /--retries needs a whole number/],
  ])("usage errors exit 2: %j", async (args, message) => {
    const r = await usageRun(args, { home });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});

describe("the home", () => {
  it("is created with mode 0700 on first use, from SCOOT_HOME or --scoot-home (flag wins)", async () => {
    const viaEnv = path.join(home, "env-home");
    const viaFlag = path.join(home, "flag-home");
    const r = await runCli(["--scoot-home", viaFlag, "config"], { env: { SCOOT_HOME: viaEnv } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`# home: ${viaFlag}`);
    expect(fs.statSync(viaFlag).mode & 0o777).toBe(0o700);
    expect(fs.existsSync(viaEnv)).toBe(false);
  });
});

describe("scoot config", () => {
  it("shows the home, the file in effect, every section and the token source", async () => {
    write("config.toml", '[backend]\nmodel = "llama3"\n');
    const r = await runCli(["config"], { home, env: { OPENAI_API_KEY: "sk-test-abcdef0123456789" } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`# config file: ${path.join(home, "config.toml")}`);
    expect(r.stdout).toContain("# token source: environment variable OPENAI_API_KEY");
    for (const s of ["backend", "agent", "tools", "skills", "mcp", "audit", "schedule", "edge"]) {
      expect(r.stdout).toContain(`[${s}]`);
    }
    expect(r.stdout).toContain('model = "llama3"');
    expect(r.stdout).not.toContain("sk-test-abcdef0123456789");
  });
  it("--json is machine-readable and shows env overrides", async () => {
    const r = await runInProcess(["config", "--json"], { home, env: { SCOOT_TOOLS_POLICY: "readonly" } });
    const j = JSON.parse(r.stdout);
    expect(j.config.tools.policy).toBe("readonly");
    expect(j.from_env).toEqual(["tools.policy"]);
    expect(j.token_source).toBe("none");
  });
  it("never prints MCP header values or env values", async () => {
    write(
      "config.toml",
      '[[mcp.servers]]\nname = "x"\ntransport = "http"\nurl = "https://mcp.example"\nheaders = [{ name = "X-Api", value = "literal-header-secret" }]\n',
    );
    const r = await runInProcess(["config"], { home });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("literal-header-secret");
    expect(r.stdout).toContain("[REDACTED]");
  });
  const badConfigRun = binaryFirst();
  it.each([
    ["config.toml", "[backend\n", /config\.toml:1:\d+: malformed TOML/],
    ["config.json", '{"backend": {"model": }}', /config\.json:1:\d+: malformed JSON/],
    ["config.toml", '[agent]\nmax_turns = "ten"\n', /agent\.max_turns: expected an integer/],
  ])("bad %s exits 2 and changes nothing", async (name, text, message) => {
    write(name, text);
    const before = fs.readFileSync(path.join(home, name), "utf8");
    const r = await badConfigRun(["config"], { home });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe("");
    expect(fs.readFileSync(path.join(home, name), "utf8")).toBe(before);
  });
  it("an unknown key is a warning on stderr naming the dotted key", async () => {
    write("config.toml", "[tools]\nconfine_write = false\n");
    const r = await runInProcess(["config"], { home });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('unknown key "tools.confine_write"');
    expect(r.stdout).toContain("confine_writes = true");
  });
  it("a wrong-typed env override is ignored with a warning", async () => {
    const r = await runInProcess(["config", "--json"], { home, env: { SCOOT_AGENT_MAX_TURNS: "lots" } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("SCOOT_AGENT_MAX_TURNS ignored");
    expect(JSON.parse(r.stdout).config.agent.max_turns).toBe(32);
  });
  it("a token file that is not 0600 is refused with the fix", async () => {
    write("token", "file-token-abcdef123");
    fs.chmodSync(path.join(home, "token"), 0o644);
    const r = await runInProcess(["config"], { home });
    expect(r.stdout).toContain(`chmod 600 ${path.join(home, "token")}`);
    expect(r.stdout).not.toContain("file-token-abcdef123");
  });
});

describe("scoot doctor", () => {
  it("reports every check OK against a reachable backend", async () => {
    // The configured model is one the server lists (otherwise the backend line WARNs).
    const r = await runCli(["doctor"], {
      home,
      env: { SCOOT_BACKEND_BASE_URL: server.url, SCOOT_BACKEND_MODEL: "scripted-model" },
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^OK\s+home/m);
    expect(r.stdout).toMatch(/^OK\s+backend\s+.*models? listed/m);
    expect(r.stdout).toMatch(/^OK\s+audit\.retention/m);
  });
  it("FAILs (exit 1) when the backend is down, naming the URL", async () => {
    const r = await runCli(["doctor", "--json"], {
      home,
      env: { SCOOT_BACKEND_BASE_URL: "http://127.0.0.1:9/v1" },
    });
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout);
    const backend = j.checks.find((c: { name: string }) => c.name === "backend");
    expect(backend.status).toBe("FAIL");
    expect(backend.detail).toContain("127.0.0.1:9");
  });
  it("WARNs audit.retention when a gap was recorded", async () => {
    fs.mkdirSync(path.join(home, "logs"), { recursive: true });
    write("logs/audit.jsonl.gaps.jsonl", `${JSON.stringify({ gap_from: 1, gap_to: 1, ts: Date.now() })}\n`);
    const r = await runInProcess(["doctor"], { home, env: { SCOOT_BACKEND_BASE_URL: server.url } });
    expect(r.stdout).toMatch(/^WARN\s+audit\.retention\s+1 retired generation/m);
    expect(r.code).toBe(0);
  });
  it("FAILs a token file with the wrong mode and says how to fix it", async () => {
    write("token", "file-token-abcdef123");
    fs.chmodSync(path.join(home, "token"), 0o640);
    const r = await runInProcess(["doctor"], { home, env: { SCOOT_BACKEND_BASE_URL: server.url } });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL\s+token\s+.*chmod 600/m);
    expect(r.stdout).not.toContain("file-token-abcdef123");
  });
  it("WARNs config warnings and a home readable by others", async () => {
    write("config.toml", '[audit]\nlevle = "debug"\n');
    fs.chmodSync(home, 0o755);
    const r = await runInProcess(["doctor"], { home, env: { SCOOT_BACKEND_BASE_URL: server.url } });
    expect(r.stdout).toMatch(/^WARN\s+config\s+.*audit\.levle/m);
    expect(r.stdout).toMatch(/^WARN\s+home\s+.*chmod 700/m);
  });
  it("never shows the token value", async () => {
    const r = await runInProcess(["doctor"], {
      home,
      env: { SCOOT_BACKEND_BASE_URL: server.url, OPENAI_API_KEY: "tok-doctor-secret-987" },
    });
    expect(r.stdout + r.stderr).not.toContain("tok-doctor-secret-987");
    expect(r.stdout).toContain("environment variable OPENAI_API_KEY");
  });
});

describe("inspection commands on bad input", () => {
  const inspectRun = binaryFirst();
  it.each([
    [["session", "show"], 2, /usage: scoot session show <id>/],
    [["session", "show", "../../etc/passwd"], 2, /invalid session id/],
    [["session", "show", "no-such-session"], 1, /no session "no-such-session"/],
    [["audit", "show", "bad id"], 2, /invalid session id/],
    [["audit", "show"], 2, /usage: scoot audit show/],
    [["sessions", "list", "extra"], 2, /unexpected argument/],
  ])("%j exits %i", async (args, code, message) => {
    const r = await inspectRun(args, { home });
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
  });
  it("sessions list on an empty home says so", async () => {
    const r = await runInProcess(["sessions", "list", "--json"], { home });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
  });
});
