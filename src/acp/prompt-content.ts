/**
 * ACP prompt content → one Scoot goal. Text is taken as is; a resource link becomes a line
 * naming it (the model reads it with file_read, through the gate, like any path); an embedded
 * text resource is inlined between markers. Anything else (images, audio, binary resources)
 * is refused with a clear error: Scoot does not advertise those capabilities.
 */
import type { ContentBlock } from "@agentclientprotocol/sdk";
import type { Result } from "../core/types.js";

/** A file: URI names a local path; anything else is shown as the URI. */
function uriText(uri: string): string {
  if (!uri.startsWith("file://")) return uri;
  try {
    return decodeURIComponent(new URL(uri).pathname);
  } catch {
    return uri;
  }
}

export function goalFromPrompt(blocks: readonly ContentBlock[]): Result<string> {
  const parts: string[] = [];
  for (const [i, b] of blocks.entries()) {
    switch (b.type) {
      case "text":
        parts.push(b.text);
        break;
      case "resource_link":
        parts.push(`[attached: ${b.name} — ${uriText(b.uri)}]`);
        break;
      case "resource":
        if ("text" in b.resource) {
          parts.push(
            `[attached ${uriText(b.resource.uri)}]\n${b.resource.text}\n[end of ${uriText(b.resource.uri)}]`,
          );
          break;
        }
        return {
          ok: false,
          error: `prompt[${i}]: a binary resource (${b.resource.uri}) is not supported; attach text or a link`,
        };
      default:
        return {
          ok: false,
          error: `prompt[${i}]: ${b.type} content is not supported (Scoot takes text, resource links and embedded text resources)`,
        };
    }
  }
  const goal = parts.join("\n\n");
  if (goal.trim() === "") return { ok: false, error: "the prompt is empty: send at least one text block" };
  return { ok: true, value: goal };
}
