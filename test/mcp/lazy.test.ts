import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

// Startup must not pay for the MCP SDK: only type imports of it at module level; the
// SDK itself is loaded with `await import()` when a server is first used.
const FILES = [
  ...fs
    .readdirSync("src/mcp")
    .filter((f) => f.endsWith(".ts"))
    .map((f) => path.join("src/mcp", f)),
  "src/tools/mcp_call.ts",
];

describe("lazy loading of the MCP SDK", () => {
  it.each(FILES)("%s imports the SDK only as types or dynamically", (file) => {
    const text = fs.readFileSync(file, "utf8");
    const staticImports = [
      ...text.matchAll(/^import\s+(?!type\b)[^;]*?from\s+"(@modelcontextprotocol\/[^"]+)"/gms),
    ];
    expect(staticImports.map((m) => m[1])).toEqual([]);
    expect(text).not.toMatch(/^export\s+(?!type\b)[^;]*?from\s+"@modelcontextprotocol\//ms);
  });

  it("the transport module does load it dynamically (the check above is not vacuous)", () => {
    const text = fs.readFileSync("src/mcp/transport.ts", "utf8");
    expect(text).toMatch(/await import\("@modelcontextprotocol\/sdk\/client\/stdio\.js"\)/);
  });
});
