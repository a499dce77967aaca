/**
 * What the live view says about one tool call: its key argument (`bash  npm test`,
 * `file_edit  src/calc.py`, `http_request  GET https://…`) and a short preview of what it
 * returned (docs/keyboard.md "The live view"). The raw action input is the model's text: anything
 * that does not parse is shown as it came, shortened.
 */

/** The key argument is cut to this many characters. */
export const KEY_ARG_MAX_CHARS = 100;
/** A preview shows the first this many lines of a result... */
export const PREVIEW_LINES = 3;
/** ...each cut to this many characters. */
export const PREVIEW_LINE_CHARS = 110;

function shorten(text: string, max: number): string {
  const one = text.replace(/\s*\n\s*/g, " ⏎ ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

function field(obj: Record<string, unknown>, name: string): string | undefined {
  const v = obj[name];
  return typeof v === "string" ? v : undefined;
}

/** The argument that says what a call does, on one line. */
export function keyArgument(action: string, raw: string): string {
  let input: unknown;
  try {
    input = JSON.parse(raw);
  } catch {
    // bash takes a command string; anything else unparsed is shown as it came.
    return shorten(raw, KEY_ARG_MAX_CHARS);
  }
  if (typeof input === "string") return shorten(input, KEY_ARG_MAX_CHARS);
  if (input === null || typeof input !== "object" || Array.isArray(input))
    return shorten(raw, KEY_ARG_MAX_CHARS);
  const o = input as Record<string, unknown>;
  let key: string | undefined;
  switch (action) {
    case "http_request":
      key = `${(field(o, "method") ?? "GET").toUpperCase()} ${field(o, "url") ?? ""}`;
      break;
    case "mcp_call":
      key = `${field(o, "server") ?? "?"} ${field(o, "tool") ?? "?"}`;
      break;
    case "parallel":
      key = Array.isArray(o.calls) ? `${o.calls.length} calls` : undefined;
      break;
    case "recall":
      key = field(o, "query") ?? (o.seq !== undefined ? `#${String(o.seq)}` : undefined);
      break;
    default:
      key = field(o, "command") ?? field(o, "path") ?? field(o, "pattern") ?? field(o, "name");
  }
  return shorten(key ?? raw, KEY_ARG_MAX_CHARS);
}

/** The first lines of a result and how many more there are. */
export function preview(text: string): { lines: string[]; more: number } {
  const all = text.replace(/\s+$/, "").split("\n");
  if (all.length === 1 && all[0] === "") return { lines: [], more: 0 };
  const lines = all.slice(0, PREVIEW_LINES).map((l) => {
    const t = l.replace(/\t/g, "  ");
    return t.length > PREVIEW_LINE_CHARS ? `${t.slice(0, PREVIEW_LINE_CHARS - 1)}…` : t;
  });
  return { lines, more: Math.max(0, all.length - PREVIEW_LINES) };
}
