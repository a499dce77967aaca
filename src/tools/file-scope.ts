/**
 * The approval scope of a tool that creates a file or replaces its content (docs/safety.md
 * "Approval scopes"): the file, as the gate resolved it — every symlink followed — and shown
 * relative to the project root when it lies inside (`notes.txt`), else as an absolute path.
 * `./a.txt`, `a.txt` and `sub/../a.txt` are one scope; a link `b.txt → secret/x` has the scope
 * `secret/x`, so an "always" on `b.txt`'s old target never covers what the link points at now.
 */
import path from "node:path";
import { shownPath } from "../core/inside.js";
import type { Result } from "../core/types.js";
import type { ApprovalScope } from "./types.js";

/** How the meaning names what the tool does to the file: `writes to notes.txt`. */
export function fileScope(verb: string): ApprovalScope<{ path: string }> {
  return {
    of(input, where) {
      const root = where.root();
      // A call the gate allowed has its write target; the lexical path is only a fallback.
      const abs = where.target.write[0] ?? path.resolve(root, input.path);
      return shownPath(abs, root);
    },
    parseMatch: parseFileMatch,
    example: "notes.txt",
    meaning: (scope) => `${verb} ${scope}`,
  };
}

function parseFileMatch(match: string): Result<string> {
  // A rule's path is taken as written: a home or a variable there is a misunderstanding.
  if (/^~(\/|$)/.test(match) || /\$\{?[A-Za-z_]/.test(match))
    return {
      ok: false,
      error: `"${match}": ~ and $VARIABLES are not expanded; write the path relative to the project, or absolute`,
    };
  if (match.includes("\0")) return { ok: false, error: "a path cannot hold a NUL character" };
  if (path.isAbsolute(match)) return { ok: true, value: withoutTrailingSlash(path.normalize(match)) };
  const folded = withoutTrailingSlash(path.normalize(match));
  if (folded === "." || folded === ".." || folded.startsWith(`..${path.sep}`))
    return {
      ok: false,
      error: `"${match}" is not a file of the project; write its path relative to the project root (notes.txt), or an absolute path for a file outside it`,
    };
  return { ok: true, value: folded };
}

function withoutTrailingSlash(p: string): string {
  return p.length > 1 && p.endsWith(path.sep) ? p.slice(0, -1) : p;
}
