import { describe, expect, it } from "vitest";
import { mcpPromptSection, mcpServerSummary } from "../../src/mcp/prompt.js";

describe("mcpPromptSection", () => {
  it("is empty when no server is configured", () => {
    expect(mcpPromptSection([])).toBe("");
  });

  it("lists each server with its transport and allowed tools, and names the action", () => {
    const text = mcpPromptSection([
      { name: "demo", transport: "stdio", allowed_tools: ["lookup", "search"] },
      { name: "web", transport: "sse", allowed_tools: [] },
    ]);
    expect(text).toContain("- demo (stdio): lookup, search");
    expect(text).toContain("- web (sse): no tools allowed (allowed_tools is empty)");
    expect(text).toContain("`mcp_call`");
  });
});

describe("mcpServerSummary", () => {
  it("records the declarative policy for audit", () => {
    expect(
      mcpServerSummary({ name: "demo", transport: "http", allowed_tools: ["a"], policy: "lookups only" }),
    ).toBe('mcp server demo (http) allowed_tools=[a] policy="lookups only"');
  });
});
