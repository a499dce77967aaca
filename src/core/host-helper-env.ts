/**
 * The place and environment of programs Scoot starts on the host, outside the sandbox
 * (stdio MCP servers, the token command). They must not take a program or module from
 * where the model can write: the project root. So they start elsewhere, their search
 * paths lose relative, empty and project entries, Python does not put the working
 * directory or the user site on its path, and Node gets no extra module directory.
 */
import fs from "node:fs";
import path from "node:path";
import { isInside } from "./inside.js";

/** Search-path variables whose entries are filtered like PATH. */
const FILTERED_SEARCH_PATHS = ["PATH", "PYTHONPATH"] as const;
/** Variables a helper never receives: each adds a place modules are loaded from. */
const DROPPED = ["NODE_PATH"] as const;
/** Forced for every helper: no working directory and no user site on Python's path. */
export const HELPER_PYTHON_ENV: Readonly<Record<string, string>> = {
  PYTHONSAFEPATH: "1",
  PYTHONNOUSERSITE: "1",
};

function realOrResolved(p: string): string {
  // The nearest existing ancestor resolved: a link into the project is caught before its target exists.
  let head = path.resolve(p);
  const tail: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(head), ...tail);
    } catch {
      const parent = path.dirname(head);
      if (parent === head) return path.resolve(p);
      tail.unshift(path.basename(head));
      head = parent;
    }
  }
}

/** True when a search-path entry is safe for a host helper. */
export function safeSearchEntry(entry: string, projectRoot: string): boolean {
  if (entry === "" || !path.isAbsolute(entry)) return false;
  const root = path.resolve(projectRoot);
  if (isInside(path.resolve(entry), root)) return false;
  return !isInside(realOrResolved(entry), realOrResolved(root));
}

export function helperSearchPath(value: string, projectRoot: string): string {
  return value
    .split(path.delimiter)
    .filter((e) => safeSearchEntry(e, projectRoot))
    .join(path.delimiter);
}

/** `env` as a host helper receives it. */
export function hostHelperEnv(
  env: Readonly<Record<string, string | undefined>>,
  projectRoot: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  for (const name of FILTERED_SEARCH_PATHS) {
    const v = out[name];
    if (v !== undefined) out[name] = helperSearchPath(v, projectRoot);
  }
  for (const name of DROPPED) delete out[name];
  Object.assign(out, HELPER_PYTHON_ENV);
  return out;
}

/**
 * Where a host helper starts: Scoot's home, which the model cannot write, unless it lies in
 * the project; then `/`. Never the project, where `npx`, `python3 -m` and Node's module lookup
 * would find what the model planted (they search the working directory and its parents).
 */
export function helperWorkingDir(home: string | undefined, projectRoot: string): string {
  if (home === undefined) return "/";
  const isDir = fs.statSync(home, { throwIfNoEntry: false })?.isDirectory() === true;
  return isDir && safeSearchEntry(home, projectRoot) ? path.resolve(home) : "/";
}
