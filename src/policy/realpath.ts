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
import { isInside } from "../core/inside.js";

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

/*
 * Kept place resolutions: the gate's secret and protected places, resolved once for a stretch
 * of calls that cannot move them (docs/safety.md "What is protected").
 *
 * Every decision checks a path against dozens of places, each by its written and its real
 * location, so resolving them all again costs one lstat per leading directory per decision:
 * the largest part of Scoot's own time in a read turn (profiled on bench/peer.mjs). Between two
 * reads nothing Scoot runs can move a place, so a resolution is kept until a call that can
 * change the filesystem (a write, a command, an MCP tool, a request: anything but a read)
 * starts, and is not kept at all while such a call runs (serve and ACP judge one session's
 * calls while another session's command runs). A place inside the project root is resolved
 * at every decision whatever was kept: the project is where the model's own writes land, and
 * a second Scoot in the same project could move it meanwhile; so is every place when a link
 * on the way to any of them lies in the project. An actor that moves a place outside the
 * project meanwhile without a call of this run (a process the model started on the host, an
 * MCP server) could as well read what the place protects. The identity check on what a tool
 * opens (policy/opened.ts) stays behind this as before.
 */

/** A place as the gate compares it: absolute and real, both folded for case. */
export interface ResolvedPlace {
  absFolded: string;
  realFolded: string | undefined;
}

type Resolve = (p: string, seen?: SeenPaths) => string | undefined;

export interface PlaceResolutions {
  /** `places` resolved: kept from an earlier decision where nothing could have moved them. */
  of(places: readonly string[], resolve: Resolve): ResolvedPlace[];
  /**
   * What `compute` derives from the places and the filesystem around them (glob's hidden
   * places), kept and dropped with them.
   */
  memo<T>(key: string, compute: () => T): T;
  /** A call that may change the filesystem starts: nothing kept is used until it ends. */
  effectStarted(): void;
  /** ...and ended: the places are resolved again at the next decision. */
  effectEnded(): void;
}

/** Each place resolved now; `seen` shares the leading directories the places have in common. */
export function resolvePlaces(places: readonly string[], resolve: Resolve): ResolvedPlace[] {
  const seen = seenPaths();
  return places.map((sp) => {
    const abs = path.resolve(sp);
    return { absFolded: abs.toLowerCase(), realFolded: resolve(abs, seen)?.toLowerCase() };
  });
}

interface Kept {
  /** The places outside the project, resolved. */
  outside: ResolvedPlace[];
  /** The places inside the project (by written or real location), resolved at each decision. */
  inside: string[];
}

export function placeResolutions(projectRoot: string): PlaceResolutions {
  const root = path.resolve(projectRoot);
  const realRoot = resolvePhysical(root) ?? root;
  const kept = new Map<readonly string[], Kept>();
  const derived = new Map<string, unknown>();
  let running = 0;
  const inProject = (abs: string, real: string | undefined): boolean =>
    isInside(abs, root) ||
    isInside(abs, realRoot) ||
    (real !== undefined && (isInside(real, root) || isInside(real, realRoot)));
  return {
    of(places, resolve) {
      if (running > 0) return resolvePlaces(places, resolve);
      const k = kept.get(places);
      if (k) return k.inside.length === 0 ? k.outside : [...k.outside, ...resolvePlaces(k.inside, resolve)];
      const seen = seenPaths();
      const all: ResolvedPlace[] = [];
      const outside: ResolvedPlace[] = [];
      const inside: string[] = [];
      for (const sp of places) {
        const abs = path.resolve(sp);
        const real = resolve(abs, seen);
        const place = { absFolded: abs.toLowerCase(), realFolded: real?.toLowerCase() };
        all.push(place);
        if (inProject(abs, real)) inside.push(abs);
        else outside.push(place);
      }
      // A link on the way to a place that lies in the project can be moved like the project's
      // own files: then nothing is kept (the walks share their links, so which place passed
      // it is not known).
      for (const link of seen.links.keys()) if (inProject(link, undefined)) return all;
      kept.set(places, { outside, inside });
      return all;
    },
    memo<T>(key: string, compute: () => T): T {
      if (running > 0) return compute();
      if (!derived.has(key)) derived.set(key, compute());
      return derived.get(key) as T;
    },
    effectStarted() {
      running += 1;
      kept.clear();
      derived.clear();
    },
    effectEnded() {
      running = Math.max(0, running - 1);
      kept.clear();
      derived.clear();
    },
  };
}
