/**
 * The filesystem side of the gate: the one place a tool path becomes the file it names.
 *
 * The path is first normalised lexically (`a/../b` is `b`, `.` and `//` vanish), exactly as
 * the file tools always did, and then walked segment by segment from `/`: every symlink is
 * replaced by its target (relative targets from the link's directory; inside a link's target
 * text `..` goes to the parent of what was physically reached, as the kernel does), and once
 * a segment does not exist the rest is joined as written. A dangling symlink therefore
 * resolves to where a write through it would land. Symlink loops and too many hops give
 * undefined, which the gate treats as "cannot verify" and refuses.
 *
 * The result is what the gate judges *and* what the tool opens: before this, the
 * gate walked the unnormalised text and stopped following links after the first missing
 * segment, so `x/../link/f` was judged as one file and opened as another.
 */
import fs from "node:fs";
import path from "node:path";

/** Same order of magnitude as the kernel's own limit (40 on Linux). */
export const MAX_SYMLINK_HOPS = 40;

/**
 * What one run of resolutions saw of each path it looked at: the lstat (null: missing) or the
 * link's target text. Shared by resolutions made together, in one synchronous stretch (the
 * gate's protected places, which share their leading directories), so `/root` is looked at
 * once rather than once per place; never kept past that stretch.
 */
export interface SeenPaths {
  stats: Map<string, fs.Stats | null>;
  links: Map<string, string>;
}

export function seenPaths(): SeenPaths {
  return { stats: new Map(), links: new Map() };
}

export function resolvePhysical(p: string, seen?: SeenPaths): string | undefined {
  // Lexical first, like every file tool: `x/../link` is `link`, whether or not `x` exists.
  return walk("/", path.resolve(p), { left: MAX_SYMLINK_HOPS }, seen);
}

/** lstat without an exception for a missing name (building one costs more than the call). */
function lstatOf(p: string, seen: SeenPaths | undefined): fs.Stats | null {
  const known = seen?.stats.get(p);
  if (known !== undefined) return known;
  const st = fs.lstatSync(p, { throwIfNoEntry: false }) ?? null;
  seen?.stats.set(p, st);
  return st;
}

function readlinkOf(p: string, seen: SeenPaths | undefined): string {
  const known = seen?.links.get(p);
  if (known !== undefined) return known;
  const target = fs.readlinkSync(p);
  seen?.links.set(p, target);
  return target;
}

function walk(
  base: string,
  p: string,
  hops: { left: number },
  seen: SeenPaths | undefined,
): string | undefined {
  let cur = p.startsWith("/") ? "/" : base;
  let missing = false;
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      cur = path.dirname(cur);
      continue;
    }
    const next = cur === "/" ? `/${seg}` : `${cur}/${seg}`;
    if (missing) {
      cur = next;
      continue;
    }
    let st: fs.Stats | null;
    try {
      st = lstatOf(next, seen);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT" && (e as NodeJS.ErrnoException).code !== "ENOTDIR") {
        return undefined; // EACCES and friends: we cannot see where this leads
      }
      st = null;
    }
    if (st === null) {
      missing = true;
      cur = next;
      continue;
    }
    if (st.isSymbolicLink()) {
      if (--hops.left < 0) return undefined;
      let target: string;
      try {
        target = readlinkOf(next, seen);
      } catch {
        return undefined;
      }
      const resolved = walk(cur, target, hops, seen);
      if (resolved === undefined) return undefined;
      cur = resolved;
      missing = !exists(cur, seen);
      continue;
    }
    cur = next;
  }
  return cur;
}

function exists(p: string, seen: SeenPaths | undefined): boolean {
  try {
    return lstatOf(p, seen) !== null;
  } catch {
    return false;
  }
}
