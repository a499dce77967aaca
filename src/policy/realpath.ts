/**
 * The filesystem side of the gate: resolves a path the way the kernel walks it.
 *
 * Segment by segment from `/`: a symlink is replaced by its target (relative targets from the
 * link's directory), `..` goes to the parent of what was *physically* reached (so
 * `link/../x` follows the link first), and once a segment does not exist the rest is
 * re-joined lexically. A dangling symlink therefore resolves to where a write through it
 * would land, not to the link's own directory. Symlink loops and too many hops give
 * undefined, which the gate treats as "cannot verify" and refuses.
 */
import fs from "node:fs";
import path from "node:path";

/** Same order of magnitude as the kernel's own limit (40 on Linux). */
export const MAX_SYMLINK_HOPS = 40;

export function resolvePhysical(p: string): string | undefined {
  // Deliberately not path.resolve: it would fold `link/..` before the link is followed.
  const abs = path.isAbsolute(p) ? p : `${process.cwd()}/${p}`;
  return walk("/", abs, { left: MAX_SYMLINK_HOPS });
}

function walk(base: string, p: string, hops: { left: number }): string | undefined {
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
    let st: fs.Stats;
    try {
      st = fs.lstatSync(next);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT" && (e as NodeJS.ErrnoException).code !== "ENOTDIR") {
        return undefined; // EACCES and friends: we cannot see where this leads
      }
      missing = true;
      cur = next;
      continue;
    }
    if (st.isSymbolicLink()) {
      if (--hops.left < 0) return undefined;
      let target: string;
      try {
        target = fs.readlinkSync(next);
      } catch {
        return undefined;
      }
      const resolved = walk(cur, target, hops);
      if (resolved === undefined) return undefined;
      cur = resolved;
      missing = !exists(cur);
      continue;
    }
    cur = next;
  }
  return cur;
}

function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}
