import { describe, expect, it } from "vitest";
import { MAX_RENDERED_BYTES, renderToolResult } from "../../src/mcp/render.js";

const PNG_4_BYTES = Buffer.from([1, 2, 3, 4]).toString("base64");

describe("renderToolResult", () => {
  it.each([
    [
      "text items, joined by newlines",
      {
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
      "a\nb",
    ],
    [
      "an image as its type and size",
      { content: [{ type: "image", mimeType: "image/png", data: PNG_4_BYTES }] },
      "[image image/png, 4 bytes]",
    ],
    [
      "audio as its type and size",
      { content: [{ type: "audio", mimeType: "audio/wav", data: PNG_4_BYTES }] },
      "[audio audio/wav, 4 bytes]",
    ],
    [
      "a text resource as its uri and text",
      {
        content: [
          { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "hello" } },
        ],
      },
      "[resource file:///a.txt text/plain]\nhello",
    ],
    [
      "a blob resource as its uri and size",
      { content: [{ type: "resource", resource: { uri: "file:///a.bin", blob: PNG_4_BYTES } }] },
      "[resource file:///a.bin: blob 4 bytes]",
    ],
    [
      "a resource link as its uri and name",
      { content: [{ type: "resource_link", uri: "demo://x/1", name: "One", description: "first" }] },
      '[resource link demo://x/1 "One": first]',
    ],
    ["an unknown item type by name", { content: [{ type: "hologram" }] }, "[hologram content]"],
    [
      "structured content alone as JSON",
      { content: [], structuredContent: { t: 21, ok: true } },
      '{"t":21,"ok":true}',
    ],
    [
      "structured content after non-text items",
      { content: [{ type: "image", mimeType: "image/gif", data: "" }], structuredContent: { n: 1 } },
      '[image image/gif, 0 bytes]\n{"n":1}',
    ],
    [
      "no structured JSON when there is text",
      { content: [{ type: "text", text: "t" }], structuredContent: { n: 1 } },
      "t",
    ],
    ["the legacy toolResult shape", { toolResult: { x: 1 } }, '{"x":1}'],
    ["an empty result", { content: [] }, "(no content)"],
  ])("renders %s", (_what, result, text) => {
    expect(renderToolResult(result)).toEqual({ ok: true, value: text });
  });

  it("turns isError into an error carrying the text", () => {
    expect(renderToolResult({ isError: true, content: [{ type: "text", text: "boom: bad input" }] })).toEqual(
      {
        ok: false,
        error: "boom: bad input",
      },
    );
  });

  it("names an isError result without text", () => {
    expect(renderToolResult({ isError: true, content: [] })).toEqual({
      ok: false,
      error: "the tool reported an error",
    });
  });

  it("caps the rendered text", () => {
    const big = "x".repeat(MAX_RENDERED_BYTES * 2);
    const r = renderToolResult({ content: [{ type: "text", text: big }] });
    expect(r.ok).toBe(true);
    const text = r.ok ? r.value : "";
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_RENDERED_BYTES);
    expect(text).toMatch(/bytes clipped/);
  });
});
