/**
 * Containment of paths, by their written form: the one answer to "is this path that folder or
 * below it" and to "how is this path shown relative to a folder". Both sides are resolved
 * lexically (`..` and trailing slashes fold away, a relative path resolves against the working
 * directory); no symlink is followed, so callers that judge real locations pass realpaths.
 */
import path from "node:path";

/** The way from `parent` to `child`, or undefined when `child` is not `parent` or below it. */
function below(parent: string, child: string): string | undefined {
  const rel = path.relative(parent, child);
  // A segment named `..x` is a name, not a step up: only `..` itself or `../…` leaves.
  if (rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return undefined;
  return rel;
}

/** True when `child` is `parent` itself or lies below it. */
export function isInside(child: string, parent: string): boolean {
  return below(parent, child) !== undefined;
}

/**
 * `isInside` for paths already resolved (absolute, no `..`, no trailing slash but `/` itself):
 * a prefix test, for the gate's hot loop over dozens of places per decision.
 */
export function isInsideResolved(child: string, parent: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith("/") ? parent : `${parent}/`;
  return child.startsWith(prefix);
}

/** `abs` relative to `cwd` when it lies below it; otherwise (outside, or `cwd` itself) `abs`. */
export function shownPath(abs: string, cwd: string): string {
  const rel = below(cwd, abs);
  return rel ? rel : abs;
}
