/**
 * Best-effort outline for files without a grammar: lines that start with a definition
 * keyword (after indentation and modifiers such as `export`, `pub`, `static`, `async`).
 * It misses type-led definitions (`int main(void)`) and may list a prose line that
 * happens to start with `type` or `package`; the outline header says it is a heuristic.
 * Nesting follows indentation.
 */
import { type Collected, collector, tidySignature } from "./entry.js";

const KEYWORDS = [
  "def",
  "defp",
  "defmacro",
  "defmodule",
  "class",
  "func",
  "function",
  "fn",
  "fun",
  "struct",
  "type",
  "typedef",
  "interface",
  "enum",
  "trait",
  "impl",
  "module",
  "package",
  "namespace",
  "union",
  "record",
  "protocol",
  "extension",
  "object",
  "macro",
  "sub",
  "proc",
  "procedure",
  "subroutine",
];

const MODIFIERS = [
  "export",
  "default",
  "declare",
  "pub(?:\\([^)]*\\))?",
  "public",
  "private",
  "protected",
  "internal",
  "static",
  "async",
  "abstract",
  "final",
  "sealed",
  "open",
  "data",
  "inline",
  "extern",
  "override",
  "virtual",
  "unsafe",
  "const",
  "local",
  "partial",
  "suspend",
];

/**
 * Keyword, then whitespace and something that can start a name or a receiver/parameter
 * list (or `<` directly: `impl<T>`, `class<T>`).
 */
const DEFINITION = new RegExp(
  `^(?:(?:${MODIFIERS.join("|")})\\s+)*(?:${KEYWORDS.join("|")})(?:\\s+[\\w$(<*&"'\`@\\[]|<)`,
);
/** Zig-style `const Name = struct {` (and `pub const`): a type defined by assignment. */
const CONTAINER_CONST =
  /^(?:pub\s+)?const\s+[\w$]+\s*=\s*(?:packed\s+|extern\s+)?(?:struct|enum|union|opaque)\b/;

export function outlineHeuristic(text: string, limit: number): Collected {
  const out = collector(limit);
  // Indent widths of the enclosing entries; an entry's depth is how many are shallower.
  const indents: number[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const body = line.trimStart();
    if (!DEFINITION.test(body) && !CONTAINER_CONST.test(body)) continue;
    const indent = indentWidth(line.slice(0, line.length - body.length));
    while (indents.length > 0 && (indents[indents.length - 1] ?? 0) >= indent) indents.pop();
    const depth = indents.length;
    indents.push(indent);
    const at = i + 1;
    out.add(() => ({ line: at, depth, text: tidySignature(body) }));
  }
  return out;
}

function indentWidth(ws: string): number {
  let w = 0;
  for (const ch of ws) w += ch === "\t" ? 4 : 1;
  return w;
}
