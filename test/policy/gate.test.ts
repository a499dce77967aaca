import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Config, defaultConfig, type PolicyMode } from "../../src/config/schema.js";
import type { Capability, Decision, Effects } from "../../src/core/types.js";
import { decide as judge } from "../../src/policy/gate.js";
import { buildGateSettings } from "../../src/policy/settings.js";
import type { GateSettings } from "../../src/policy/types.js";

/**
 * The gate's decision without its target, named by the action only for the table's
 * readability: the gate itself never sees the action name (it decides from effects).
 */
function decide(_action: string, effects: Effects, s: GateSettings): Decision {
  const v = judge(effects, s);
  return v.allow ? { allow: true } : v;
}

let tmp: string;
let project: string;

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-")));
  project = path.join(tmp, "project");
  fs.mkdirSync(path.join(project, "src"), { recursive: true });
  fs.mkdirSync(path.join(tmp, "outside"));
  fs.symlinkSync("../outside", path.join(project, "out"));
  fs.writeFileSync(path.join(tmp, "auth.dat"), "t\n", { mode: 0o600 });
  fs.symlinkSync("../auth.dat", path.join(project, "tok"));
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

function config(mut?: (c: Config) => void): Config {
  const c = defaultConfig();
  c.mcp.servers = [
    { name: "everything", transport: "stdio", command: "node", allowed_tools: ["echo", "add"] },
    { name: "locked", transport: "stdio", command: "node", allowed_tools: [] },
  ];
  mut?.(c);
  return c;
}

function settings(mode: PolicyMode, mut?: (c: Config) => void): GateSettings {
  return buildGateSettings(config(mut), project, { mode, tokenFile: path.join(tmp, "auth.dat") });
}

const MODES: PolicyMode[] = ["readonly", "guarded", "unrestricted"];

/** One representative, otherwise-harmless call per action. */
const CALLS: Record<string, [string, Effects]> = {
  file_read: ["file_read", { capability: "read", readPaths: ["src/a.ts"] }],
  glob: ["glob", { capability: "read", readPaths: ["."] }],
  file_write: ["file_write", { capability: "write", writePaths: ["out.txt"] }],
  file_edit: ["file_edit", { capability: "write", readPaths: ["src/a.ts"], writePaths: ["src/a.ts"] }],
  http_get: ["http_request", { capability: "net_read", url: { method: "GET", url: "https://example.com/" } }],
  http_post: [
    "http_request",
    { capability: "net_write", url: { method: "POST", url: "https://example.com/" } },
  ],
  bash: ["bash", { capability: "exec", command: "git status" }],
  mcp_call: ["mcp_call", { capability: "exec", mcp: { server: "everything", tool: "echo" } }],
  skill: ["skill", { capability: "native" }],
  recall: ["recall", { capability: "native" }],
};

describe("gate: capability by mode", () => {
  const expected: Record<string, Record<PolicyMode, string | true>> = {
    file_read: { readonly: true, guarded: true, unrestricted: true },
    glob: { readonly: true, guarded: true, unrestricted: true },
    file_write: {
      readonly: "readonly mode denies writes; run with --policy guarded",
      guarded: true,
      unrestricted: true,
    },
    file_edit: {
      readonly: "readonly mode denies writes; run with --policy guarded",
      guarded: true,
      unrestricted: true,
    },
    http_get: {
      readonly: "readonly mode denies network access (GET and HEAD included); run with --policy guarded",
      guarded: true,
      unrestricted: true,
    },
    http_post: {
      readonly: "readonly mode denies network access (GET and HEAD included); run with --policy guarded",
      guarded: true,
      unrestricted: true,
    },
    bash: {
      readonly: "readonly mode denies shell commands; run with --policy guarded",
      guarded: true,
      unrestricted: true,
    },
    mcp_call: {
      readonly: "readonly mode denies MCP calls; run with --policy guarded",
      guarded: true,
      unrestricted: true,
    },
    skill: { readonly: true, guarded: true, unrestricted: true },
    recall: { readonly: true, guarded: true, unrestricted: true },
  };
  const rows = Object.keys(CALLS).flatMap((k) => MODES.map((m) => [k, m] as const));
  it.each(rows)("%s in %s", (key, mode) => {
    const [action, effects] = CALLS[key]!;
    const want = expected[key]![mode];
    const d = decide(action, effects, settings(mode));
    if (want === true) expect(d).toEqual({ allow: true });
    else expect(d).toEqual({ allow: false, reason: want });
  });

  it("native is allowed even when it names secret paths (skills enforce their own confinement)", () => {
    expect(decide("skill", { capability: "native", readPaths: [".env"] }, settings("readonly"))).toEqual({
      allow: true,
    });
  });

  it("an unknown capability is denied", () => {
    const d = decide("mystery", { capability: "teleport" as Capability }, settings("unrestricted"));
    expect(d).toEqual({ allow: false, reason: "policy: unknown capability teleport" });
  });
});

describe("gate: read paths apply to every reading call", () => {
  it.each([
    ["readonly", "file_read", ["/etc/hosts"], "absolute paths are refused in readonly mode"],
    ["readonly", "grep", ["../x"], "escapes the project root"],
    ["readonly", "glob", ["out"], "leads outside the project root"],
    ["readonly", "outline", [".env"], ".env is a secret-like name"],
    ["guarded", "file_read", [".env.local"], ".env.local is a secret-like name"],
    ["guarded", "grep", ["/home/u/.ssh/id_rsa"], ".ssh is a secret-like name"],
    ["guarded", "file_read", ["tok"], "configured secret"],
    ["guarded", "file_read", ["src/a.ts", ".env"], ".env is a secret-like name"],
  ] as const)("%s %s %j is denied (%s)", (mode, action, paths, reason) => {
    const d = decide(action, { capability: "read", readPaths: [...paths] }, settings(mode));
    expect(d.allow).toBe(false);
    if (!d.allow) expect(d.reason).toContain(reason);
  });

  it.each([
    ["guarded", ["/etc/hosts"]],
    ["guarded", ["out"]],
    ["guarded", ["~/.bashrc"]],
    ["readonly", ["src", "README.md"]],
    ["unrestricted", [".env", "/etc/shadow"]],
  ] as const)("%s %j is allowed", (mode, paths) => {
    expect(decide("file_read", { capability: "read", readPaths: [...paths] }, settings(mode))).toEqual({
      allow: true,
    });
  });
});

describe("gate: write paths", () => {
  it.each([
    [["/tmp/x"], "absolute paths are refused"],
    [["../x"], "escapes the project root"],
    [["out/x.txt"], "resolves outside the project root through a symlink"],
    [[".env"], ".env is a secret-like name"],
    [["ok.txt", "out/x"], "resolves outside the project root"],
    [[], "the call names no path to check"],
  ])("guarded %j is denied (%s)", (paths, reason) => {
    const d = decide("file_write", { capability: "write", writePaths: [...paths] }, settings("guarded"));
    expect(d.allow).toBe(false);
    if (!d.allow) expect(d.reason).toContain(reason);
  });

  it("confine_writes = false keeps only the secret rule", () => {
    const s = settings("guarded", (c) => {
      c.tools.confine_writes = false;
    });
    expect(decide("file_write", { capability: "write", writePaths: ["/tmp/scoot-x/y"] }, s)).toEqual({
      allow: true,
    });
    expect(decide("file_write", { capability: "write", writePaths: ["out/x"] }, s)).toEqual({ allow: true });
    expect(decide("file_write", { capability: "write", writePaths: [".env"] }, s).allow).toBe(false);
    expect(decide("file_write", { capability: "write", writePaths: ["tok"] }, s).allow).toBe(false);
  });
});

describe("gate: bash goes through the shell rules", () => {
  it.each([
    ["guarded", "rm -rf /", "shell: recursive delete of / is blocked in guarded mode"],
    ["guarded", "curl x | sh", "shell: piping into sh is blocked in guarded mode"],
    ["guarded", "", "shell: empty command"],
    ["unrestricted", "  ", "shell: empty command"],
  ] as const)("%s %j is denied", (mode, command, reason) => {
    expect(decide("bash", { capability: "exec", command }, settings(mode))).toEqual({ allow: false, reason });
  });

  it("an exec with no command text (and no MCP target) is refused in every mode", () => {
    for (const mode of ["readonly", "guarded", "unrestricted"] as const) {
      expect(decide("bash", { capability: "exec" }, settings(mode)).allow).toBe(false);
    }
    expect(decide("bash", { capability: "exec" }, settings("unrestricted"))).toEqual({
      allow: false,
      reason: "policy: exec call names neither a command nor an MCP target",
    });
  });

  it("unrestricted runs what guarded blocks", () => {
    expect(decide("bash", { capability: "exec", command: "rm -rf /" }, settings("unrestricted"))).toEqual({
      allow: true,
    });
  });
});

describe("gate: http_request goes through the URL rules", () => {
  it.each([
    ["guarded", "http://127.0.0.1:11434/v1", false],
    ["guarded", "http://169.254.169.254/", false],
    ["guarded", "http://[::ffff:127.0.0.1]/", false],
    ["guarded", "https://example.com/", true],
    ["unrestricted", "http://127.0.0.1/", true],
  ] as const)("%s %s allowed=%s", (mode, url, allowed) => {
    const d = decide("http_request", { capability: "net_read", url: { method: "GET", url } }, settings(mode));
    expect(d.allow).toBe(allowed);
  });

  it("block_internal_http = false lets guarded reach internal hosts", () => {
    const s = settings("guarded", (c) => {
      c.tools.block_internal_http = false;
    });
    expect(
      decide("http_request", { capability: "net_read", url: { method: "GET", url: "http://localhost/" } }, s),
    ).toEqual({ allow: true });
  });

  it("a network call without a URL is refused unless unrestricted", () => {
    expect(decide("http_request", { capability: "net_read" }, settings("guarded"))).toEqual({
      allow: false,
      reason: "http: the call names no URL to check",
    });
    expect(decide("http_request", { capability: "net_read" }, settings("unrestricted"))).toEqual({
      allow: true,
    });
  });
});

describe("gate: mcp_call needs the server and the tool on the allowlist (guarded and unrestricted)", () => {
  const mcp = (server: string, tool: string): Effects => ({ capability: "exec", mcp: { server, tool } });
  it.each([
    ["guarded", "everything", "echo", true],
    ["unrestricted", "everything", "add", true],
    ["guarded", "everything", "ECHO", "mcp: tool ECHO is not in allowed_tools of server everything"],
    ["unrestricted", "everything", "longRunningOperation", "not in allowed_tools"],
    ["guarded", "everything", "*", "not in allowed_tools"],
    ["guarded", "locked", "echo", "mcp: server locked allows no tools (its allowed_tools is empty)"],
    ["unrestricted", "locked", "anything", "allows no tools"],
    ["guarded", "nope", "echo", "mcp: unknown server nope; configure it under [[mcp.servers]]"],
    ["unrestricted", "__proto__", "echo", "unknown server __proto__"],
    ["guarded", "constructor", "echo", "unknown server constructor"],
    ["guarded", "toString", "echo", "unknown server toString"],
    ["readonly", "everything", "echo", "readonly mode denies MCP calls; run with --policy guarded"],
  ] as const)("%s %s/%s -> %s", (mode, server, tool, want) => {
    const d = decide("mcp_call", mcp(server, tool), settings(mode));
    if (want === true) expect(d).toEqual({ allow: true });
    else {
      expect(d.allow).toBe(false);
      if (!d.allow) expect(d.reason).toContain(want);
    }
  });

  it("mcp_call without a target is refused", () => {
    expect(decide("mcp_call", { capability: "exec" }, settings("unrestricted")).allow).toBe(false);
  });

  it("model-chosen names are clipped and made single-line in reasons", () => {
    const d = decide("mcp_call", mcp(`evil\n${"x".repeat(200)}`, "t"), settings("guarded"));
    expect(d.allow).toBe(false);
    if (!d.allow) {
      expect(d.reason).not.toContain("\n");
      expect(d.reason.length).toBeLessThan(140);
    }
  });

  it("an exec call with neither command nor MCP target is refused unless unrestricted", () => {
    expect(decide("mystery", { capability: "exec" }, settings("guarded"))).toEqual({
      allow: false,
      reason: "policy: exec call names neither a command nor an MCP target",
    });
  });
});

describe("buildGateSettings", () => {
  it("maps mode, root and hardening flags from the configuration", () => {
    const s = buildGateSettings(
      config((c) => {
        c.tools.confine_writes = false;
        c.tools.block_internal_http = false;
      }),
      `${project}/src/..`,
      // No credential-pointing variables: the host running the tests may set some.
      { mode: "guarded", env: {} },
    );
    expect(s.mode).toBe("guarded");
    expect(s.projectRoot).toBe(project);
    expect(s.confineWrites).toBe(false);
    expect(s.blockInternalHttp).toBe(false);
    expect(s.secretPaths).toEqual([]);
  });

  it("makes secret_paths absolute (project-relative, ~ = home) and adds the token file", () => {
    const s = buildGateSettings(
      config((c) => {
        c.tools.secret_paths = ["vault/key.dat", "/etc/scoot/secret.dat", "~/.config/scoot/x", " ", "~"];
      }),
      project,
      { mode: "guarded", tokenFile: path.join(tmp, "auth.dat"), env: {} },
    );
    expect(s.secretPaths).toEqual([
      path.join(project, "vault", "key.dat"),
      "/etc/scoot/secret.dat",
      path.join(os.homedir(), ".config", "scoot", "x"),
      os.homedir(),
      path.join(tmp, "auth.dat"),
    ]);
  });

  it("builds MCP allowlists from the entries that pass MCP validation only", () => {
    const s = buildGateSettings(
      config((c) => {
        c.mcp.servers = [
          { name: "a", command: "node", allowed_tools: ["x", "y"] },
          { name: "b", command: "node" },
          { name: "c", command: "node", allowed_tools: "x" },
          { name: "d", command: "node", allowed_tools: ["x", 3] },
          { command: "node", allowed_tools: ["x"] },
          { name: "", command: "node", allowed_tools: ["x"] },
          { name: 7, command: "node", allowed_tools: ["x"] },
          { name: "e", allowed_tools: ["x"] },
          { name: "dup", command: "node", allowed_tools: ["x"] },
          { name: "dup", command: "node", allowed_tools: ["x"] },
          { name: "__proto__", command: "node", allowed_tools: ["x"] },
        ];
      }),
      project,
      { mode: "guarded" },
    );
    // Invalid entries (wrong types, no command, a name used twice) are unknown servers to the
    // gate; `__proto__` is just a name.
    expect(Object.entries(s.mcpAllowed).sort(([x], [y]) => x.localeCompare(y))).toEqual([
      ["__proto__", ["x"]],
      ["a", ["x", "y"]],
      ["b", []],
    ]);
    for (const name of ["c", "d", "e", "dup"]) expect(Object.hasOwn(s.mcpAllowed, name)).toBe(false);
  });

  it("uses a real resolver that follows symlinks and re-joins missing parts", () => {
    const s = settings("guarded");
    expect(s.realpath(path.join(project, "out", "new", "file.txt"))).toBe(
      path.join(tmp, "outside", "new", "file.txt"),
    );
    expect(s.realpath(path.join(project, "src", "missing.ts"))).toBe(path.join(project, "src", "missing.ts"));
    expect(s.realpath(project)).toBe(project);
  });

  it("the default configuration gives the documented guarded behaviour end to end", () => {
    const s = buildGateSettings(defaultConfig(), project, {
      mode: "guarded",
      tokenFile: path.join(tmp, "auth.dat"),
    });
    expect(decide("bash", { capability: "exec", command: "git status" }, s)).toEqual({ allow: true });
    expect(decide("file_write", { capability: "write", writePaths: ["out/x"] }, s).allow).toBe(false);
    expect(
      decide(
        "http_request",
        { capability: "net_read", url: { method: "GET", url: "http://localhost:8080/" } },
        s,
      ).allow,
    ).toBe(false);
    expect(decide("file_read", { capability: "read", readPaths: ["tok"] }, s).allow).toBe(false);
    expect(decide("mcp_call", { capability: "exec", mcp: { server: "any", tool: "t" } }, s).allow).toBe(
      false,
    );
  });
});
