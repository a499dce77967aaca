/**
 * Turns an MCP `tools/call` result into observation text. Binary content is described,
 * never dumped (base64 would flood the context for nothing the model can read), and
 * `isError` results become error values so the observation says the tool failed.
 */
import { clip } from "../core/clip.js";
import type { Result } from "../core/types.js";

/** Cap on rendered text; the agent loop clips the observation much further. */
export const MAX_RENDERED_BYTES = 1024 * 1024;

type Item = Record<string, unknown>;

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function base64Bytes(data: unknown): number {
  return typeof data === "string" ? Buffer.byteLength(data, "base64") : 0;
}

function renderResource(resource: unknown): string {
  if (typeof resource !== "object" || resource === null) return "[resource]";
  const r = resource as Item;
  const uri = str(r.uri) ?? "(no uri)";
  const mime = str(r.mimeType);
  const text = str(r.text);
  if (text !== undefined) return `[resource ${uri}${mime ? ` ${mime}` : ""}]\n${text}`;
  return `[resource ${uri}${mime ? ` ${mime}` : ""}: blob ${base64Bytes(r.blob)} bytes]`;
}

function renderItem(item: unknown): { text: string; isText: boolean } {
  if (typeof item !== "object" || item === null)
    return { text: "[unrecognised content item]", isText: false };
  const it = item as Item;
  switch (it.type) {
    case "text":
      return { text: str(it.text) ?? "", isText: true };
    case "image":
    case "audio":
      return {
        text: `[${it.type} ${str(it.mimeType) ?? "unknown type"}, ${base64Bytes(it.data)} bytes]`,
        isText: false,
      };
    case "resource":
      return { text: renderResource(it.resource), isText: false };
    case "resource_link": {
      const name = str(it.name);
      const uri = str(it.uri) ?? "(no uri)";
      const desc = str(it.description);
      return {
        text: `[resource link ${uri}${name ? ` "${name}"` : ""}${desc ? `: ${desc}` : ""}]`,
        isText: false,
      };
    }
    default:
      return { text: `[${typeof it.type === "string" ? it.type : "unknown"} content]`, isText: false };
  }
}

function stringify(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return "[unserialisable structured content]";
  }
}

/** Renders a `CallToolResult` (or the older `{toolResult}` shape) to text; `isError` → error. */
export function renderToolResult(result: unknown, maxBytes = MAX_RENDERED_BYTES): Result<string> {
  const r = (typeof result === "object" && result !== null ? result : {}) as Item;
  const parts: string[] = [];
  let sawText = false;
  if (Array.isArray(r.content)) {
    for (const item of r.content) {
      const { text, isText } = renderItem(item);
      if (isText) sawText = true;
      parts.push(text);
    }
  }
  if (r.structuredContent !== undefined && !sawText) parts.push(stringify(r.structuredContent));
  if (!Array.isArray(r.content) && r.toolResult !== undefined) parts.push(stringify(r.toolResult));
  let text = parts.join("\n");
  if (Buffer.byteLength(text) > maxBytes) text = clip(text, maxBytes);
  if (r.isError === true) return { ok: false, error: text === "" ? "the tool reported an error" : text };
  return { ok: true, value: text === "" ? "(no content)" : text };
}
