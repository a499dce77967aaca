/**
 * The index reader behind "a nested AGENTS.md is guidance only when git's index holds it"
 * (src/agent/git-index.ts): what it reads must be what git itself says (`git ls-files -s`), in
 * every index version and object format, and anything it cannot read whole is no index.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { blobId, parseGitIndex, readGitIndex } from "../../src/agent/git-index.js";
import { removeDir, tempDir } from "../helpers/cli.js";

let root: string;
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };

function git(...args: string[]): string {
  return execFileSync(
    "git",
    ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", ...args],
    { cwd: root, env: GIT_ENV, encoding: "utf8" },
  );
}

function write(rel: string, text: string): void {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

beforeEach(() => {
  root = fs.realpathSync(tempDir("scoot-git-index-"));
});
afterEach(() => {
  removeDir(root);
});

/** What git says: stage-0 regular files, path → blob. */
function gitSays(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of git("ls-files", "-s", "-z").split("\0")) {
    const m = /^(\d+) ([0-9a-f]+) (\d)\t(.*)$/s.exec(line);
    if (m && (m[1] === "100644" || m[1] === "100755") && m[3] === "0") out.set(m[4]!, m[2]!);
  }
  return out;
}

/**
 * A repository with many paths, ones sharing prefixes, a symlink and an executable, and (in the
 * index alone) one very long path.
 */
function populate(long = true): void {
  for (let i = 0; i < 60; i++) write(`pkg${i % 7}/dir${i}/file-${i}.txt`, `content ${i}\n`);
  write("pkg1/AGENTS.md", "one\n");
  write("pkg1/deep/er/AGENTS.md", "deeper\n");
  write("ünïcode/AGENTS.md", "unicode\n");
  fs.symlinkSync("pkg1/AGENTS.md", path.join(root, "link.md"));
  write("run.sh", "#!/bin/sh\n");
  fs.chmodSync(path.join(root, "run.sh"), 0o755);
  git("add", "-A");
  if (long) addLongPath();
  git("commit", "-q", "-m", "init");
}

function addLongPath(): void {
  // One path longer than the 12-bit length field (4095) of an entry's flags: too long for the
  // file system (PATH_MAX), so it is put in the index only.
  const long = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, "0")}${"d".repeat(240)}`).join(
    "/",
  );
  const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], {
    cwd: root,
    env: GIT_ENV,
    input: "long\n",
    encoding: "utf8",
  }).trim();
  git("update-index", "--add", "--cacheinfo", `100644,${blob},${long}/AGENTS.md`);
}

const all = () => true;

describe("reads what git reads", () => {
  for (const version of [2, 3, 4]) {
    it(`index version ${version}: every stage-0 regular file with its blob, and nothing else`, () => {
      git("init", "-q");
      populate();
      git("update-index", "--index-version", String(version));
      const expected = gitSays();
      if (version === 3) {
        // Git writes version 3 only when an entry has extended flags: an intent-to-add one has.
        write("ita/AGENTS.md", "intent\n");
        git("add", "-N", "ita/AGENTS.md");
      }
      expect(fs.readFileSync(path.join(root, ".git", "index")).readUInt32BE(4)).toBe(version);
      const read = readGitIndex(root, all);
      if (!read.ok) throw new Error(read.error);
      expect(read.index.format).toBe("sha1");
      expect(read.index.blobs).toEqual(expected);
      expect(read.index.blobs.size).toBeGreaterThan(60);
      // The executable counts (a regular file), the symlink does not.
      expect(read.index.blobs.has("run.sh")).toBe(true);
      expect(read.index.blobs.has("link.md")).toBe(false);
      expect([...read.index.blobs.keys()].some((k) => k.length > 4095)).toBe(true);
    });
  }

  it("a sha256 repository", () => {
    git("init", "-q", "--object-format=sha256");
    populate();
    const read = readGitIndex(root, all);
    if (!read.ok) throw new Error(read.error);
    expect(read.index.format).toBe("sha256");
    expect(read.index.blobs).toEqual(gitSays());
    expect(read.index.blobs.get("pkg1/AGENTS.md")).toBe(blobId(Buffer.from("one\n"), "sha256"));
  });

  it("the blob id is git's own (git hash-object)", () => {
    git("init", "-q");
    write("x/AGENTS.md", "héllo\n\0binary");
    const ours = blobId(fs.readFileSync(path.join(root, "x", "AGENTS.md")), "sha1");
    expect(ours).toBe(git("hash-object", "x/AGENTS.md").trim());
  });

  it("keeps only what the filter wants", () => {
    git("init", "-q");
    populate();
    const read = readGitIndex(root, (rel) => rel.endsWith("/AGENTS.md"));
    if (!read.ok) throw new Error(read.error);
    expect([...read.index.blobs.keys()].every((k) => k.endsWith("/AGENTS.md"))).toBe(true);
    expect(read.index.blobs.size).toBe(4);
  });

  it("a linked worktree's index, found through its .git file", () => {
    git("init", "-q");
    populate(false);
    const tree = `${root}-wt`;
    try {
      git("worktree", "add", "-q", tree);
      fs.appendFileSync(path.join(tree, "pkg1", "AGENTS.md"), "more\n");
      execFileSync("git", ["add", "pkg1/AGENTS.md"], { cwd: tree, env: GIT_ENV });
      const read = readGitIndex(tree, all);
      if (!read.ok) throw new Error(read.error);
      expect(read.index.blobs.get("pkg1/AGENTS.md")).toBe(blobId(Buffer.from("one\nmore\n"), "sha1"));
    } finally {
      removeDir(tree);
    }
  });
});

describe("entries that are not a committed file do not count", () => {
  it("intent-to-add, skip-worktree and conflict stages are left out", () => {
    git("init", "-q", "-b", "main");
    write("a/AGENTS.md", "base\n");
    write("b/AGENTS.md", "b\n");
    git("add", "-A");
    git("commit", "-q", "-m", "base");
    git("checkout", "-q", "-b", "other");
    write("a/AGENTS.md", "other\n");
    git("commit", "-q", "-am", "other");
    git("checkout", "-q", "main");
    write("a/AGENTS.md", "main\n");
    git("commit", "-q", "-am", "main");
    try {
      git("merge", "-q", "other");
    } catch {
      // The conflict is the point.
    }
    write("c/AGENTS.md", "intent\n");
    git("add", "-N", "c/AGENTS.md");
    git("update-index", "--skip-worktree", "b/AGENTS.md");
    expect(git("ls-files", "-s", "a/AGENTS.md").trim().split("\n")).toHaveLength(3);
    const read = readGitIndex(root, all);
    if (!read.ok) throw new Error(read.error);
    expect([...read.index.blobs.keys()]).toEqual([]);
  });
});

describe("what is not read whole is no index", () => {
  it("outside a repository: missing", () => {
    const read = readGitIndex(root, all);
    expect(read).toMatchObject({ ok: false, missing: true });
  });

  it("a split index, a cut-off one, a changed byte and a symlinked one are refused", () => {
    git("init", "-q");
    populate();
    const index = path.join(root, ".git", "index");
    const whole = fs.readFileSync(index);
    expect(parseGitIndex(whole, all)).toHaveProperty("blobs");
    expect(parseGitIndex(whole.subarray(0, whole.length - 100), all)).toHaveProperty("error");
    const flipped = Buffer.from(whole);
    flipped[200] = flipped[200]! ^ 0xff;
    expect(parseGitIndex(flipped, all)).toHaveProperty("error");

    fs.renameSync(index, `${index}.real`);
    fs.symlinkSync(`${index}.real`, index);
    expect(readGitIndex(root, all)).toMatchObject({ ok: false, missing: false });
    fs.rmSync(index);
    fs.renameSync(`${index}.real`, index);

    git("update-index", "--split-index");
    const split = readGitIndex(root, all);
    expect(split).toMatchObject({ ok: false });
    expect(split.ok ? "" : split.error).toMatch(/split/);
  });

  it("reading runs nothing of the repository's configuration (core.fsmonitor)", () => {
    git("init", "-q");
    populate();
    const marker = path.join(root, "fsmonitor-ran");
    const hook = path.join(root, "monitor.sh");
    fs.writeFileSync(hook, `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    git("config", "core.fsmonitor", hook);
    expect(readGitIndex(root, all).ok).toBe(true);
    expect(fs.existsSync(marker)).toBe(false);
  });
});
