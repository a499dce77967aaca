/**
 * Scoot as it was at another commit, built beside this one for a side-by-side run: the "before"
 * figure of a change measured in the same run as the "after" (absolute times on a shared
 * machine lie). The ref's sources are taken from git (`git archive`, nothing else of the work
 * tree), bundled with this checkout's dependencies (the bundle leaves npm packages external and
 * the dependency set has not changed), and kept under the OS temp dir per commit.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The main before issue 31 (one call, one record) started: where its aims were measured from. */
export const DEFAULT_BEFORE_REF = "5426002";

function git(args) {
  const r = spawnSync("git", ["-C", repo, ...args], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

/** `{ cli, ref }` of the built ref, or `{ error }` saying why it could not be built. */
export function beforeCli(ref = process.env.BENCH_BEFORE ?? DEFAULT_BEFORE_REF) {
  try {
    const sha = git(["rev-parse", "--verify", `${ref}^{commit}`]);
    const dir = path.join(os.tmpdir(), `scoot-bench-before-${sha.slice(0, 12)}`);
    // The entry is dist/scoot.cjs since 2026-12-05, dist/scoot.mjs before.
    const entry = () =>
      ["scoot.cjs", "scoot.mjs"].map((f) => path.join(dir, "dist", f)).find((f) => fs.existsSync(f));
    if (entry()) return { cli: entry(), ref: sha.slice(0, 7) };
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const archive = spawnSync("git", ["-C", repo, "archive", sha, "src", "scripts", "package.json"], {
      maxBuffer: 512 * 1024 * 1024,
    });
    if (archive.status !== 0) throw new Error(`git archive ${sha}: ${archive.stderr}`);
    const untar = spawnSync("tar", ["-x", "-C", dir], { input: archive.stdout });
    if (untar.status !== 0) throw new Error(`tar: ${untar.stderr}`);
    fs.symlinkSync(path.join(repo, "node_modules"), path.join(dir, "node_modules"));
    // tsc is skipped, so the bundle's output directory is made here (a bundle script that writes
    // its files itself does not make it).
    fs.mkdirSync(path.join(dir, "dist"), { recursive: true });
    const bundle = spawnSync(process.execPath, ["scripts/bundle.mjs"], { cwd: dir, encoding: "utf8" });
    const cli = entry();
    if (bundle.status !== 0 || !cli) throw new Error(`bundle: ${bundle.stderr.trim()}`);
    return { cli, ref: sha.slice(0, 7) };
  } catch (e) {
    return { error: `the before build (${ref}) could not be made: ${e.message}` };
  }
}
