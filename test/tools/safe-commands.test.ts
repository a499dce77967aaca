/**
 * Known-safe commands (docs/safety.md "Known-safe commands"): every listed command runs unasked,
 * and every variant that writes, deletes, runs something, is not plain, names a place outside
 * the project or a secret asks. The table is judged by the words (`knownSafeWords`), by the words
 * and the project's files (`knownSafeCommand`: symbolic links), through the real `prepareCall`
 * (the record's `knownSafe`), and through the one decision `scoot policy check` and the run share.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { decisionOf, safeCommandsRun } from "../../src/agent/call-decision.js";
import { defaultConfig } from "../../src/config/schema.js";
import { knownSafeCommand, knownSafeWords } from "../../src/tools/safe-commands.js";
import { preparedCall } from "../helpers/calls.js";

const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-safe-")));
const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "scoot-safe-out-")));
afterAll(() => {
  fs.rmSync(project, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});
fs.mkdirSync(path.join(project, "src"));
fs.writeFileSync(path.join(project, "notes.txt"), "alpha\n");
fs.writeFileSync(path.join(project, "src", "a.ts"), "export {};\n");
fs.writeFileSync(path.join(project, ".env"), "KEY=x\n");
fs.writeFileSync(path.join(outside, "private.txt"), "mine\n");
fs.symlinkSync(path.join(outside, "private.txt"), path.join(project, "away.txt"));
fs.symlinkSync(outside, path.join(project, "away-dir"));
fs.symlinkSync(".env", path.join(project, "settings.txt"));
fs.symlinkSync("notes.txt", path.join(project, "near.txt"));

/** Commands that run without a question. */
const SAFE: string[] = [
  "ls",
  "ls -la",
  "ls -la src",
  "ls -R",
  "ls  -l   src",
  "cat notes.txt",
  "cat -n notes.txt src/a.ts",
  "head notes.txt",
  "head -n 5 notes.txt",
  "head -c 100 notes.txt",
  "tail -n 20 notes.txt",
  "tail -f notes.txt",
  "wc notes.txt",
  "wc -l notes.txt src/a.ts",
  "pwd",
  "pwd -P",
  "grep TODO notes.txt",
  "grep -rn TODO src",
  "grep -r TODO .",
  "grep -c alpha notes.txt",
  "grep -o -w -e alpha notes.txt",
  "grep -f patterns.txt notes.txt",
  "grep -rn --include=src/a.ts alpha .",
  "rg TODO",
  "rg -n TODO src",
  "rg --files",
  "rg -l -i alpha --glob=src/a.ts",
  "find .",
  "find . -name a.ts -type f",
  "find src -maxdepth 2 -print",
  "find . -path ./node_modules -prune -o -name a.ts -print",
  "git status",
  "git status --short",
  "git status -sb",
  "git log",
  "git log --oneline -n 5",
  "git log --format=%h",
  "git log -p --follow src/a.ts",
  "git log main..feature",
  "git diff",
  "git diff --stat",
  "git diff --cached src/a.ts",
  "git diff --no-ext-diff",
  "git show",
  "git show HEAD",
  "git show --stat HEAD",
  "git show HEAD:src/a.ts",
  "git branch",
  "git branch -a",
  "git branch -vv",
  "git branch -r --no-color",
  "git branch --show-current",
  "git branch --list feat",
  "git branch --sort=-committerdate --format=%h",
  "git branch --merged=main",
  // a link that stays in the project
  "cat near.txt",
];

/** Commands that still ask: a writing, deleting or running variant, a command that is not plain, a place outside the project or a secret. */
const ASKS: string[] = [
  // find's actions
  "find . -delete",
  "find . -name x -delete",
  "find . -exec rm x",
  "find . -execdir sh",
  "find . -ok rm",
  "find . -okdir rm",
  "find . -fprint out.txt",
  "find . -fprint0 out.txt",
  "find . -fprintf out.txt %p",
  "find . -fls out.txt",
  "find -L .",
  "find . -follow",
  "find . --exec rm",
  "find . -exec rm {} ;",
  // git: writing, deleting, running options and subcommands that change things
  "git diff --output=x",
  "git diff --output x",
  "git diff --ext-diff",
  "git diff --ext",
  "git diff -c",
  "git log --output=x",
  "git log --exec=make",
  "git show --output=x",
  "git -c core.pager=x log",
  "git -c diff.external=./evil diff",
  "git -C ../other status",
  "git --no-pager log",
  "git --git-dir=../other/.git log",
  "git log --git-dir=../other/.git",
  "git branch x",
  "git branch -D x",
  "git branch -d x",
  "git branch --delete x",
  "git branch -m a b",
  "git branch -M a b",
  "git branch -c a b",
  "git branch -f x",
  "git branch -u origin/x",
  "git branch --set-upstream-to=origin/x",
  "git branch --unset-upstream",
  "git branch --edit-description",
  "git branch -t x origin/x",
  "git checkout x",
  "git stash list",
  "git clean -n",
  "git fetch",
  "git",
  "GIT status",
  // grep and rg: what runs a command or follows links out
  "grep -R x .",
  "grep -rR x .",
  "grep --dereference-recursive x .",
  "grep --dereference-r x .",
  "rg --pre cmd x",
  "rg --pre=cmd x",
  "rg --pre-glob=x x",
  "rg --hostname-bin=cmd x",
  "rg -z x",
  "rg -nz x",
  "rg --search-zip x",
  "rg -L x",
  "rg --follow x",
  "rg --hidden x",
  "rg -. x",
  "rg -u x",
  "rg -uu x",
  "rg --unrestricted x",
  "rg --no-ignore x",
  "rg --no-ignore-vcs x",
  // wc reading a list of other files
  "wc --files0-from=list.txt",
  "wc --files0-from list.txt",
  // not plain: redirections, pipes, separators, substitutions, variables, globs, quotes
  "grep -r x . > out",
  "ls > out",
  "ls; rm x",
  "ls && rm x",
  "ls || rm x",
  "ls | sh",
  "ls & rm x",
  "ls\nrm x",
  "ls $(rm x)",
  "ls `rm x`",
  "ls $HOME",
  "A=1 ls",
  "LD_PRELOAD=x.so ls",
  "cat *.txt",
  "cat 'notes.txt'",
  "cat ~/.ssh/id_rsa",
  // a program named by path, or another program
  "/bin/ls",
  "./ls",
  "LS",
  "echo hi",
  "rm x",
  "touch x",
  "sed -n 1p notes.txt",
  "sort -o out notes.txt",
  "tee out",
  "xargs ls",
  "env ls",
  "sudo ls",
  // a place outside the project, or a secret
  "cat /etc/passwd",
  "ls /",
  "cat ../x",
  "cat src/../../x",
  "grep -r x ..",
  "find / -name x",
  "git diff --no-index /etc/passwd notes.txt",
  "cat .env",
  "cat .env.local",
  "head id_rsa",
  "cat token.txt",
  "grep -r token .",
  "git show HEAD:.env",
  "cat .ssh/config",
  "grep -f/etc/passwd notes.txt",
  "wc --files0-from=/etc/x",
];

describe("known-safe commands by their words", () => {
  it.each(SAFE)("%j runs unasked", (command) => {
    expect(knownSafeWords(command)).toBe(true);
    expect(knownSafeCommand(command, project)).toBe(true);
  });

  it.each(ASKS)("%j asks", (command) => {
    expect(knownSafeWords(command)).toBe(false);
    expect(knownSafeCommand(command, project)).toBe(false);
  });
});

describe("known-safe commands in a project: where the names lead", () => {
  it.each([
    ["cat away.txt", "a link to a file outside the project"],
    ["ls away-dir", "a link to a directory outside the project"],
    ["cat away-dir/private.txt", "a path through such a link"],
    ["grep -r x away-dir", "a search through such a link"],
    ["cat settings.txt", "a link to a secret in the project"],
  ])("%j asks: %s", (command) => {
    expect(knownSafeWords(command)).toBe(true);
    expect(knownSafeCommand(command, project)).toBe(false);
  });

  it("a project that does not exist has no known-safe command", () => {
    expect(knownSafeCommand("ls", path.join(project, "missing"))).toBe(false);
  });
});

describe("the call record and the one decision", () => {
  const decide = (command: string, mode: "guarded" | "unrestricted" | "readonly", on = true) => {
    const config = defaultConfig();
    config.tools.approval_safe_commands = on;
    const p = preparedCall("bash", command, { cwd: project, mode });
    return decisionOf(p, { rules: undefined, canAsk: true, safeCommands: safeCommandsRun(mode, config) });
  };

  it("prepareCall marks a known-safe command on its record, and only that", () => {
    const ls = preparedCall("bash", "ls -la", { cwd: project, mode: "guarded" });
    expect(ls.kind === "ready" && ls.knownSafe).toBe(true);
    const rm = preparedCall("bash", "rm notes.txt", { cwd: project, mode: "guarded" });
    expect(rm.kind === "ready" && rm.knownSafe).toBeUndefined();
    const away = preparedCall("bash", "cat away.txt", { cwd: project, mode: "guarded" });
    expect(away.kind === "ready" && away.knownSafe).toBeUndefined();
  });

  it("runs unasked in guarded mode only, and only while tools.approval_safe_commands is on", () => {
    expect(decide("ls -la", "guarded")).toEqual({ kind: "run", why: "known_safe" });
    expect(decide("git status", "guarded")).toEqual({ kind: "run", why: "known_safe" });
    expect(decide("ls -la", "guarded", false)).toEqual({ kind: "ask" });
    expect(decide("ls -la", "unrestricted")).toEqual({ kind: "ask" });
    expect(decide("ls -la", "readonly").kind).toBe("refuse");
    for (const command of ["rm x", "git diff --output=x", "ls; rm x", "grep -r x . > out"])
      expect(decide(command, "guarded"), command).toEqual({ kind: "ask" });
    // The gate decides first: a recursive delete is denied, never asked about nor run.
    expect(decide("find . -delete", "guarded")).toMatchObject({ kind: "refuse", why: "denied" });
  });

  it("the setting's default is on", () => {
    expect(defaultConfig().tools.approval_safe_commands).toBe(true);
    expect(safeCommandsRun("guarded", defaultConfig())).toBe(true);
    expect(safeCommandsRun("unrestricted", defaultConfig())).toBe(false);
    expect(safeCommandsRun("readonly", defaultConfig())).toBe(false);
  });
});
