/**
 * `skills pack <dir> [out.tar]`: a reviewable, reproducible archive of one skill.
 * Validation comes first and any refusal writes nothing; the archive is built in a
 * temp file beside the target and renamed into place, so no half-written tar is left.
 * Symlinks and special files are refused rather than skipped: a package that silently
 * differs from the directory the author reviewed would be worse than no package.
 */
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { type CommandOutput, lines } from "./command.js";
import { scanSkillDir } from "./discover.js";
import { formatProblem, SKILL_FILE, type SkillMeta } from "./frontmatter.js";
import { hardLinkError, isHidden, readRegularFile, realpathOrUndefined } from "./fsutil.js";
import { ustarChunks } from "./tar.js";

export const MANIFEST_FILE = ".scoot-skill.json";
/** A skill is instructions plus a few references; these bounds keep a mistake cheap. */
export const MAX_PACK_FILES = 1000;
export const MAX_PACK_BYTES = 64 * 1024 * 1024;
const MAX_PACK_DEPTH = 32;
export const PACK_NOTE =
  "Skills add instructions, never privileges: installing this skill only lets the model read these files " +
  "with the `skill` action. It grants no tool, path, network or policy permission; `capabilities` and " +
  "`allowed_tools` are for human review only.";

export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

export interface SkillManifest {
  name: string;
  description: string;
  metadata: { capabilities: string[]; allowed_tools: string[]; scope: string | null };
  files: ManifestFile[];
  note: string;
}

export interface PackOptions {
  /** Directory relative paths (the skill dir and the output) are resolved against. */
  cwd: string;
}

interface WalkResult {
  files: { rel: string; abs: string; mtime: number }[];
  refused: string[];
  skipped: string[];
  tooMany: boolean;
}

function kindOf(d: fs.Dirent): string {
  if (d.isSymbolicLink()) return "symlink";
  if (d.isFIFO()) return "named pipe";
  if (d.isSocket()) return "socket";
  if (d.isBlockDevice() || d.isCharacterDevice()) return "device";
  return "special file";
}

/** Lists what goes into the archive without following any link. */
function walk(root: string, exclude: string | undefined): WalkResult {
  const out: WalkResult = { files: [], refused: [], skipped: [], tooMany: false };
  const visit = (abs: string, rel: string, depth: number): void => {
    const entries = fs.readdirSync(abs, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      const childAbs = path.join(abs, e.name);
      // Hidden entries are never packed, so they are not inspected either (a .git/ may hold anything).
      if (isHidden(e.name)) {
        out.skipped.push(childRel);
        continue;
      }
      if (childAbs === exclude) continue;
      if (e.isDirectory()) {
        if (depth >= MAX_PACK_DEPTH) out.refused.push(`${childRel} (nested deeper than ${MAX_PACK_DEPTH})`);
        else visit(childAbs, childRel, depth + 1);
      } else if (e.isFile()) {
        const nlink = fs.lstatSync(childAbs).nlink;
        if (nlink > 1) out.refused.push(`${childRel} (${hardLinkError(nlink)})`);
        else if (out.files.length >= MAX_PACK_FILES) out.tooMany = true;
        else out.files.push({ rel: childRel, abs: childAbs, mtime: 0 });
      } else {
        out.refused.push(`${childRel} (${kindOf(e)})`);
      }
    }
  };
  visit(root, "", 0);
  return out;
}

function resolveOut(out: string | undefined, name: string, cwd: string): string {
  if (out === undefined || out === "") return path.resolve(cwd, `${name}.tar`);
  const abs = path.resolve(cwd, out);
  try {
    if (fs.statSync(abs).isDirectory()) return path.join(abs, `${name}.tar`);
  } catch {
    // Not there yet: it is the file to create.
  }
  return abs;
}

/** The manifest exactly as written into the archive. */
export function buildManifest(meta: SkillMeta, files: ManifestFile[]): SkillManifest {
  return {
    name: meta.name,
    description: meta.description,
    metadata: {
      capabilities: meta.capabilities ?? [],
      allowed_tools: meta.allowed_tools ?? [],
      scope: meta.scope ?? null,
    },
    files,
    note: PACK_NOTE,
  };
}

function fail(exitCode: 1 | 2, stderr: string[]): CommandOutput {
  return { stdout: "", stderr: lines(stderr), exitCode };
}

/** Writes `chunks` to `target` through a temp file in the same directory, then renames. */
function writeAtomic(target: string, chunks: Buffer[]): string | undefined {
  const tmp = path.join(
    path.dirname(target),
    `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`,
  );
  let fd: number | undefined;
  try {
    fd = fs.openSync(tmp, "wx", 0o644);
    for (const c of chunks) {
      let off = 0;
      while (off < c.length) off += fs.writeSync(fd, c, off, c.length - off);
    }
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, target);
    return undefined;
  } catch (e) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    return `cannot write ${target}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
  }
}

export function runSkillsPack(dir: string, out: string | undefined, opts: PackOptions): CommandOutput {
  const abs = path.resolve(opts.cwd, dir);
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch {
    return fail(2, [`skills pack: no such directory: ${abs}`]);
  }
  if (!st.isDirectory()) return fail(2, [`skills pack: not a directory: ${abs}`]);

  const scanned = scanSkillDir(abs);
  const warn = scanned.result.warnings.map((w) => `WARN ${formatProblem(w)}`);
  if (!scanned.result.ok) {
    return fail(1, [
      ...warn,
      ...scanned.result.problems.map((p) => `INVALID ${formatProblem(p)}`),
      "skills pack: the skill is invalid; nothing written",
    ]);
  }
  const meta = scanned.result.meta;
  const root = scanned.dir;
  const target = resolveOut(out, meta.name, opts.cwd);
  const targetParent = realpathOrUndefined(path.dirname(target));
  if (targetParent === undefined)
    return fail(1, [...warn, `skills pack: no such directory: ${path.dirname(target)}`]);
  // A default `<name>.tar` written inside the skill must not end up inside the next pack.
  const exclude = path.join(targetParent, path.basename(target));

  let found: WalkResult;
  try {
    found = walk(root, exclude);
  } catch (e) {
    return fail(1, [...warn, `skills pack: cannot read ${root}: ${(e as NodeJS.ErrnoException).code ?? e}`]);
  }
  if (found.refused.length > 0) {
    return fail(1, [
      ...warn,
      "skills pack: refused: symlinks and special files cannot be packed; nothing written:",
      ...found.refused.map((r) => `  ${r}`),
    ]);
  }
  if (found.tooMany)
    return fail(1, [...warn, `skills pack: more than ${MAX_PACK_FILES} files; nothing written`]);

  const entries: { path: string; data: Buffer; mtime: number }[] = [];
  const manifestFiles: ManifestFile[] = [];
  let total = 0;
  let newest = 0;
  for (const f of found.files) {
    const read = readRegularFile(f.abs, MAX_PACK_BYTES - total, { noFollow: true, singleLink: true });
    if (!read.ok) {
      const why = read.code === "too_large" ? `the package would exceed ${MAX_PACK_BYTES} bytes` : read.error;
      return fail(1, [...warn, `skills pack: ${f.rel}: ${why}; nothing written`]);
    }
    total += read.data.length;
    let mtime = 0;
    try {
      mtime = Math.floor(fs.lstatSync(f.abs).mtimeMs / 1000);
    } catch {
      // Keep 0: the content already read is what matters.
    }
    newest = Math.max(newest, mtime);
    const sha256 = createHash("sha256").update(read.data).digest("hex");
    manifestFiles.push({ path: f.rel, size: read.data.length, sha256 });
    entries.push({ path: `${meta.name}/${f.rel}`, data: read.data, mtime });
  }
  if (!manifestFiles.some((f) => f.path === SKILL_FILE)) {
    return fail(1, [...warn, `skills pack: ${SKILL_FILE} is not a regular file; nothing written`]);
  }

  const manifest = buildManifest(meta, manifestFiles);
  // The manifest's mtime follows the newest file, so an unchanged skill packs to identical bytes.
  entries.unshift({
    path: `${meta.name}/${MANIFEST_FILE}`,
    data: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`),
    mtime: newest,
  });
  const chunks = ustarChunks(entries);
  if (!chunks.ok) return fail(1, [...warn, `skills pack: ${chunks.error}; nothing written`]);
  const err = writeAtomic(target, chunks.value);
  if (err) return fail(1, [...warn, `skills pack: ${err}; nothing written`]);

  const notes = found.skipped.length > 0 ? [`skipped hidden: ${found.skipped.join(", ")}`] : [];
  return {
    stdout: lines([`packed ${meta.name}: ${manifestFiles.length} files, ${total} bytes -> ${target}`]),
    stderr: lines([...warn, ...notes]),
    exitCode: 0,
  };
}
