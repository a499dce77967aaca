/**
 * The XDG layout (docs/configuration.md "Runtime home"): with no
 * `--scoot-home`, no `SCOOT_HOME` and no `~/.scoot`, a set `XDG_CONFIG_HOME` or `XDG_STATE_HOME`
 * puts the configuration in `$XDG_CONFIG_HOME/scoot` and what Scoot writes in
 * `$XDG_STATE_HOME/scoot`. The order is a table here; the real CLI reads its configuration from
 * the XDG directory, writes its logs and sessions to the other, and the model can neither read
 * nor change the moved configuration (gate and sandbox), as it cannot the home's.
 *
 * Under /var/tmp: the sandbox's private /tmp would hide anything under /tmp anyway.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveHomeDirs } from "../../src/config/home.js";
import { removeDir, runCli } from "../helpers/cli.js";
import { bwrapWorks } from "../helpers/procs.js";
import {
  type ScriptedServer,
  type ScriptItem,
  startScriptedServer,
  step,
} from "../helpers/scripted-server.js";

const BWRAP = bwrapWorks();
/** The moved configuration; writes outside the project are judged by place, not refused as absolute. */
const CONFIG = "[agent]\nmax_turns = 7\n\n[tools]\nconfine_writes = false\n";
if (!BWRAP)
  console.log(
    "xdg-home e2e: the sandbox case is skipped, bwrap cannot run here (apt-get install bubblewrap)",
  );

describe("which directories a home is", () => {
  let user: string;
  beforeEach(() => {
    user = fs.mkdtempSync(path.join("/var/tmp", "scoot-xdg-order-"));
  });
  afterEach(() => removeDir(user));

  const cases: [string, Record<string, string>, string | undefined, boolean, string, string][] = [
    // name, env (besides HOME), flag, ~/.scoot exists, root, configDir (relative to the user's home)
    ["nothing set: ~/.scoot", {}, undefined, false, ".scoot", ".scoot"],
    [
      "both XDG set",
      { XDG_CONFIG_HOME: "@/cfg", XDG_STATE_HOME: "@/st" },
      undefined,
      false,
      "st/scoot",
      "cfg/scoot",
    ],
    [
      "only XDG_CONFIG_HOME: state at the spec's default",
      { XDG_CONFIG_HOME: "@/cfg" },
      undefined,
      false,
      ".local/state/scoot",
      "cfg/scoot",
    ],
    [
      "only XDG_STATE_HOME: config at the spec's default",
      { XDG_STATE_HOME: "@/st" },
      undefined,
      false,
      "st/scoot",
      ".config/scoot",
    ],
    [
      "an existing ~/.scoot wins over XDG",
      { XDG_CONFIG_HOME: "@/cfg", XDG_STATE_HOME: "@/st" },
      undefined,
      true,
      ".scoot",
      ".scoot",
    ],
    [
      "SCOOT_HOME wins over XDG",
      { SCOOT_HOME: "@/sh", XDG_CONFIG_HOME: "@/cfg" },
      undefined,
      false,
      "sh",
      "sh",
    ],
    [
      "--scoot-home wins over everything",
      { SCOOT_HOME: "@/sh", XDG_CONFIG_HOME: "@/cfg" },
      "@/flag",
      false,
      "flag",
      "flag",
    ],
    [
      "a relative XDG value is ignored (the spec says so)",
      { XDG_CONFIG_HOME: "cfg", XDG_STATE_HOME: "st" },
      undefined,
      false,
      ".scoot",
      ".scoot",
    ],
    [
      "an empty XDG value is unset",
      { XDG_CONFIG_HOME: "", XDG_STATE_HOME: "" },
      undefined,
      false,
      ".scoot",
      ".scoot",
    ],
  ];
  for (const [name, vars, flag, dotExists, root, configDir] of cases) {
    it(name, () => {
      const at = (v: string) => v.replace(/^@/, user);
      const env: NodeJS.ProcessEnv = { HOME: user };
      for (const [k, v] of Object.entries(vars)) env[k] = at(v);
      if (dotExists) fs.mkdirSync(path.join(user, ".scoot"));
      const dirs = resolveHomeDirs(flag === undefined ? undefined : at(flag), env);
      expect(dirs).toEqual({ root: path.join(user, root), configDir: path.join(user, configDir) });
    });
  }
});

describe("a run under the XDG layout", () => {
  let user: string;
  let project: string;
  let cfg: string;
  let st: string;
  let server: ScriptedServer | undefined;
  beforeEach(() => {
    user = fs.realpathSync(fs.mkdtempSync(path.join("/var/tmp", "scoot-xdg-")));
    project = path.join(user, "work");
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, "notes.md"), "hello\n");
    cfg = path.join(user, "cfg");
    st = path.join(user, "st");
    fs.mkdirSync(path.join(cfg, "scoot"), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(cfg, "scoot", "config.toml"), CONFIG, { mode: 0o600 });
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    removeDir(user);
  });

  async function scoot(steps: ScriptItem[], args: string[] = []) {
    server = await startScriptedServer([...steps, step("final", "done")]);
    return runCli(["-e", "go", ...args], {
      cwd: project,
      env: {
        HOME: user,
        SCOOT_HOME: undefined,
        XDG_CONFIG_HOME: cfg,
        XDG_STATE_HOME: st,
        SCOOT_BACKEND_BASE_URL: server.url,
      },
      timeoutMs: 60_000,
    });
  }
  const seen = (n: number) =>
    JSON.stringify((server!.completions()[n + 1]!.body as { messages: unknown[] }).messages.at(-1));

  it("reads the XDG config, writes logs and sessions under XDG state, makes no ~/.scoot", async () => {
    const r = await scoot([], ["--policy", "guarded"]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(path.join(user, ".scoot"))).toBe(false);
    expect(fs.readdirSync(path.join(st, "scoot", "state", "sessions")).length).toBeGreaterThan(0);
    expect(fs.statSync(path.join(st, "scoot", "logs", "audit.jsonl")).size).toBeGreaterThan(0);
    const shown = await runCli(["config"], {
      cwd: project,
      env: { HOME: user, SCOOT_HOME: undefined, XDG_CONFIG_HOME: cfg, XDG_STATE_HOME: st },
    });
    expect(shown.stdout).toContain(`# config file: ${path.join(cfg, "scoot", "config.toml")}`);
    expect(shown.stdout).toContain(`# config directory: ${path.join(cfg, "scoot")}`);
    expect(shown.stdout).toMatch(/max_turns = 7/);
  });

  it("the file tools are refused the moved configuration, by any name", async () => {
    const file = path.join(cfg, "scoot", "config.toml");
    const r = await scoot(
      [
        step("file_read", { path: file }),
        step("file_write", { path: file, content: "[tools]\npolicy = 'unrestricted'\n" }),
        step("file_read", {
          path: path.join(cfg, "scoot", "..", "scoot", "CONFIG.toml", "..", "config.toml"),
        }),
      ],
      ["--policy", "guarded"],
    );
    expect(r.code, r.stderr).toBe(0);
    for (const n of [0, 1, 2]) expect(seen(n)).toMatch(/protected|refused|denied/i);
    expect(seen(0)).not.toContain("max_turns = 7");
    expect(fs.readFileSync(file, "utf8")).toBe(CONFIG);
  });

  it.skipIf(!BWRAP)("a sandboxed bash call cannot see or change the moved configuration", async () => {
    const file = path.join(cfg, "scoot", "config.toml");
    const r = await scoot(
      [
        step(
          "bash",
          `cat ${file}; echo rc=$?; echo x >> ${file}; echo w=$?; ls ${path.join(cfg, "scoot")} | wc -l`,
        ),
      ],
      ["--policy", "guarded"],
    );
    expect(r.code, r.stderr).toBe(0);
    expect(seen(0)).not.toContain("max_turns = 7");
    // The append lands, if anywhere, in the sandbox's empty stand-in for the hidden directory.
    expect(fs.readFileSync(file, "utf8")).toBe(CONFIG);
  });
});
