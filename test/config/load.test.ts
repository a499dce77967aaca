import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { defaultConfig } from "../../src/config/schema.js";
import { useScene } from "../helpers/scene.js";

const scene = useScene({ home: "scoot-test-" });

function load(env: NodeJS.ProcessEnv = {}) {
  return loadConfig(scene.home, env);
}
function ok(env: NodeJS.ProcessEnv = {}) {
  const r = load(env);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}
function write(name: string, text: string): string {
  const file = path.join(scene.home, name);
  fs.writeFileSync(file, text);
  return file;
}

describe("defaults", () => {
  it("with no file every key has its default", () => {
    const v = ok();
    expect(v.file).toBeUndefined();
    expect(v.config).toEqual(defaultConfig());
    expect(v.config.backend.base_url).toBe("http://127.0.0.1:11434/v1");
    expect(v.config.tools.policy).toBe("guarded");
    expect(v.config.edge.max_job_policy).toBe("readonly");
    expect(v.config.audit.max_file_bytes).toBe(16_777_216);
    // Codex's budget for AGENTS.md (docs/context.md "Project instructions").
    expect(v.config.agent.project_instructions_max_bytes).toBe(32_768);
  });
});

describe("file load order and per-key merge", () => {
  it("config.toml wins over config.json", () => {
    write("config.toml", '[backend]\nmodel = "from-toml"\n');
    write("config.json", '{"backend":{"model":"from-json"}}');
    const v = ok();
    expect(v.config.backend.model).toBe("from-toml");
    expect(v.file).toBe(path.join(scene.home, "config.toml"));
  });
  it("config.json is the fallback", () => {
    write("config.json", '{"backend":{"model":"from-json"}}');
    expect(ok().config.backend.model).toBe("from-json");
  });
  it("missing keys keep their defaults within a section", () => {
    write("config.toml", "[tools]\ntimeout_ms = 5000\n");
    const v = ok();
    expect(v.config.tools.timeout_ms).toBe(5000);
    expect(v.config.tools.policy).toBe("guarded");
    expect(v.config.tools.confine_writes).toBe(true);
    expect(v.config.backend.model).toBe("qwen2.5");
  });
  it("arrays of tables load (mcp.servers, schedule.jobs)", () => {
    write(
      "config.toml",
      '[[mcp.servers]]\nname = "a"\ncommand = "x"\n[[schedule.jobs]]\nid = "j"\ngoal = "g"\nevery_sec = 5\n',
    );
    const v = ok();
    expect(v.config.mcp.servers).toEqual([{ name: "a", command: "x" }]);
    expect(v.config.schedule.jobs[0]).toMatchObject({ id: "j", every_sec: 5 });
  });
});

describe("malformed files are fatal and name file, line and column", () => {
  it.each([
    ["config.toml", 'a = 1\n[backend\nmodel="x"\n', /config\.toml:2:\d+: malformed TOML/],
    ["config.toml", '[backend]\nmodel = "unterminated\n', /config\.toml:2:\d+: malformed TOML/],
    ["config.json", '{\n  "backend": {\n    model: 1\n  }\n}', /config\.json:3:5: malformed JSON/],
    ["config.json", '{"backend": {', /config\.json:1:\d+: malformed JSON/],
  ])("%s %#", (name, text, pattern) => {
    write(name, text);
    const r = load();
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(pattern);
  });
});

describe("wrong types are fatal and name the dotted key", () => {
  it.each([
    ['[backend]\ntimeout_ms = "fast"\n', "backend.timeout_ms", "an integer"],
    ["[backend]\ntimeout_ms = 1.5\n", "backend.timeout_ms", "an integer"],
    ["[agent]\nmax_turns = 0\n", "agent.max_turns", "must be in 1..100000, got 0"],
    ['[tools]\nconfine_writes = "yes"\n', "tools.confine_writes", "true or false"],
    ['[tools]\nsecret_paths = "/etc/x"\n', "tools.secret_paths", "a list of strings"],
    ["[backend]\nextra_body = 3\n", "backend.extra_body", "a table"],
    ['[backend]\napi = "grpc"\n', "backend.api", "not one of chat, responses"],
    ["[mcp]\nservers = [1, 2]\n", "mcp.servers", "a list of tables"],
    ["backend = 3\n", "backend", "expected a table"],
  ])("%j", (text, key, expected) => {
    write("config.toml", text);
    const r = load();
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.message).toContain(key);
      expect(r.error.message).toContain(expected);
      expect(r.error.message).toContain("config.toml");
    }
  });
});

describe("unknown keys warn with the dotted key and do not fail", () => {
  it.each([
    ['[tools]\npolicyy = "readonly"\n', 'unknown key "tools.policyy"'],
    ['[toolz]\npolicy = "readonly"\n', 'unknown section "toolz"'],
  ])("%j", (text, warning) => {
    write("config.toml", text);
    const v = ok();
    expect(v.warnings.join("\n")).toContain(warning);
    expect(v.config.tools.policy).toBe("guarded");
  });
});

describe("unknown policy strings in the file become readonly (a typo never loosens the gate)", () => {
  it.each(["unrestrictd", "YOLO!", "", "off", "guarde"])("tools.policy = %j", (value) => {
    write("config.toml", `[tools]\npolicy = ${JSON.stringify(value)}\n`);
    const v = ok();
    expect(v.config.tools.policy).toBe("readonly");
    expect(v.warnings.join("\n")).toMatch(/unknown policy/);
  });
  it.each([
    ["yolo", "unrestricted"],
    ["ReadOnly", "readonly"],
    [" guarded ", "guarded"],
  ])("%j normalises to %s", (value, mode) => {
    write("config.toml", `[tools]\npolicy = ${JSON.stringify(value)}\n`);
    expect(ok().config.tools.policy).toBe(mode);
  });
  it("edge.max_job_policy typo becomes readonly, never looser", () => {
    write("config.toml", '[edge]\nmax_job_policy = "unrestricted-please"\n');
    expect(ok().config.edge.max_job_policy).toBe("readonly");
  });
});

describe("environment overrides: env > file > default", () => {
  it("env beats file, file beats default", () => {
    write("config.toml", '[backend]\nmodel = "file-model"\ntimeout_ms = 7\n');
    const v = ok({ SCOOT_BACKEND_MODEL: "env-model" });
    expect(v.config.backend.model).toBe("env-model");
    expect(v.config.backend.timeout_ms).toBe(7);
    expect(v.fromEnv).toEqual(["backend.model"]);
  });
  it("an empty env value counts as unset", () => {
    write("config.toml", '[backend]\nmodel = "file-model"\n');
    expect(ok({ SCOOT_BACKEND_MODEL: "" }).config.backend.model).toBe("file-model");
  });
  it.each([
    ["SCOOT_TOOLS_TIMEOUT_MS", "1234", (c: ReturnType<typeof defaultConfig>) => c.tools.timeout_ms, 1234],
    [
      "SCOOT_TOOLS_CONFINE_WRITES",
      "false",
      (c: ReturnType<typeof defaultConfig>) => c.tools.confine_writes,
      false,
    ],
    ["SCOOT_TOOLS_POLICY", "readonly", (c: ReturnType<typeof defaultConfig>) => c.tools.policy, "readonly"],
    [
      "SCOOT_TOOLS_SECRET_PATHS",
      '["/a","/b"]',
      (c: ReturnType<typeof defaultConfig>) => c.tools.secret_paths,
      ["/a", "/b"],
    ],
    [
      "SCOOT_SKILLS_EXTRA_PATHS",
      "/x, /y",
      (c: ReturnType<typeof defaultConfig>) => c.skills.extra_paths,
      ["/x", "/y"],
    ],
    [
      "SCOOT_BACKEND_EXTRA_BODY",
      '{"temperature":0}',
      (c: ReturnType<typeof defaultConfig>) => c.backend.extra_body,
      { temperature: 0 },
    ],
  ])("%s=%s", (name, value, get, expected) => {
    expect(get(ok({ [name]: value }).config)).toEqual(expected);
  });
  it.each([
    ["SCOOT_TOOLS_TIMEOUT_MS", "soon"],
    ["SCOOT_TOOLS_CONFINE_WRITES", "maybe"],
    ["SCOOT_BACKEND_EXTRA_BODY", "{not json"],
    ["SCOOT_BACKEND_EXTRA_BODY", "[1]"],
    ["SCOOT_AUDIT_LEVEL", "verbose"],
  ])("wrong-typed %s=%s is ignored with a warning", (name, value) => {
    const v = ok({ [name]: value });
    expect(v.config).toEqual(defaultConfig());
    expect(v.warnings.join("\n")).toContain(`${name} ignored`);
  });
  it.each([
    ["readonly", "readonyl"],
    ["readonly", "guarded!"],
    ["guarded", "unrestricetd"],
    ["unrestricted", "readonli"],
  ])(
    "file %s + SCOOT_TOOLS_POLICY=%s: the override is ignored with a warning, the file's value stands",
    (file, typo) => {
      write("config.toml", `[tools]\npolicy = "${file}"\n`);
      const v = ok({ SCOOT_TOOLS_POLICY: typo });
      expect(v.config.tools.policy).toBe(file);
      expect(v.warnings.join("\n")).toContain(
        `SCOOT_TOOLS_POLICY ignored: unknown policy "${typo}"; keeping "${file}"`,
      );
      expect(v.fromEnv).not.toContain("tools.policy");
    },
  );
  it("an edge.max_job_policy override typo keeps the file's ceiling", () => {
    write("config.toml", '[edge]\nmax_job_policy = "readonly"\n');
    const v = ok({ SCOOT_EDGE_MAX_JOB_POLICY: "unrestrictd" });
    expect(v.config.edge.max_job_policy).toBe("readonly");
    expect(v.warnings.join("\n")).toContain("SCOOT_EDGE_MAX_JOB_POLICY ignored");
  });
});

describe("agent.default_mode", () => {
  it("plan is plan mode now, accepted without a warning (test/e2e/plan-mode.test.ts runs it)", () => {
    write("config.toml", '[agent]\ndefault_mode = "plan"\n');
    const v = ok();
    expect(v.config.agent.default_mode).toBe("plan");
    expect(v.warnings).toEqual([]);
  });
});

describe("backend.base_url is checked where it is read", () => {
  it.each([
    [
      "localhost:8080",
      '"localhost:8080" does not start with http:// or https://; write it as http://localhost:8080/v1',
    ],
    [
      "localhost:",
      '"localhost:" does not start with http:// or https://; write it as http://localhost:<port>/v1',
    ],
    [
      "127.0.0.1:11434/v1",
      '"127.0.0.1:11434/v1" does not start with http:// or https://; write it as http://127.0.0.1:11434/v1',
    ],
    ["http//x", '"http//x" is not a URL: the ":" after http is missing; write it as http://x/v1'],
    [
      "ftp://x",
      '"ftp://x" uses ftp://; model servers are reached over http:// or https://, e.g. http://x/v1',
    ],
    ["http://", '"http://" is not a URL: its host is missing or not valid (e.g. http://127.0.0.1:11434/v1)'],
  ])("%j from the environment is an error quoting the whole value", (value, said) => {
    const r = load({ SCOOT_BACKEND_BASE_URL: value });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.problems).toHaveLength(1);
    expect(r.error.problems[0]).toBe(`SCOOT_BACKEND_BASE_URL: ${said}`);
  });

  it("from the file it names the file and the key", () => {
    const file = write("config.toml", '[backend]\nbase_url = "localhost:8080"\n');
    const r = load();
    expect(!r.ok && r.error.problems).toEqual([
      `${file}: backend.base_url: "localhost:8080" does not start with http:// or https://; write it as http://localhost:8080/v1`,
    ]);
  });

  it("a good URL loads (trimmed), with or without /v1", () => {
    expect(ok({ SCOOT_BACKEND_BASE_URL: " http://h:8080/v1 " }).config.backend.base_url).toBe(
      "http://h:8080/v1",
    );
    expect(ok({ SCOOT_BACKEND_BASE_URL: "https://h" }).config.backend.base_url).toBe("https://h");
  });
});

describe("every problem is reported at once", () => {
  it("three problems in the file and one in the environment: all four, with the warning beside them", () => {
    const file = write(
      "config.toml",
      [
        "[backend]",
        'base_url = "localhost:8080"',
        "[tools]",
        'policy = "gaurded"',
        "[agent]",
        "max_turns = 0",
        "[audit]",
        'level = "loud"',
        "",
      ].join("\n"),
    );
    const r = load({ SCOOT_BACKEND_BASE_URL: "ftp://x" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.problems).toEqual([
      `${file}: backend.base_url: "localhost:8080" does not start with http:// or https://; write it as http://localhost:8080/v1`,
      `${file}: agent.max_turns: must be in 1..100000, got 0`,
      `${file}: audit.level: "loud" is not one of debug, info, warn, error`,
      'SCOOT_BACKEND_BASE_URL: "ftp://x" uses ftp://; model servers are reached over http:// or https://, e.g. http://x/v1',
    ]);
    expect(r.error.message).toBe(r.error.problems.join("\n"));
    expect(r.error.warnings).toEqual([
      `${file}: tools.policy: unknown policy "gaurded"; using "readonly" (valid: readonly, guarded, unrestricted, yolo)`,
    ]);
  });

  it("a section that is not a table does not hide the problems after it", () => {
    const file = write("config.json", JSON.stringify({ backend: 3, agent: { max_turns: -1 } }));
    const r = load();
    expect(!r.ok && r.error.problems).toEqual([
      `${file}: backend: expected a table, got an integer (3)`,
      `${file}: agent.max_turns: must be in 1..100000, got -1`,
    ]);
  });
});
