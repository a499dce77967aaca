import { describe, expect, it } from "vitest";
import { resolveHeaders, validateMcpServers } from "../../src/config/mcp-servers.js";

const stdio = { name: "demo", command: "mcp-demo", allowed_tools: ["lookup"] };
const remote = {
  name: "web",
  transport: "http",
  url: "https://mcp.example.com/mcp",
  allowed_tools: ["search"],
};

describe("valid entries", () => {
  it("fills defaults for a stdio server", () => {
    const r = validateMcpServers([{ name: "demo", command: "mcp-demo" }]);
    expect(r.problems).toEqual([]);
    expect(r.servers).toEqual([
      {
        name: "demo",
        transport: "stdio",
        command: "mcp-demo",
        args: [],
        env: [],
        headers: [],
        allowed_tools: [],
      },
    ]);
  });

  it("keeps every field of a full stdio entry", () => {
    const entry = {
      name: "demo.v2_x-1",
      transport: "stdio",
      command: "node",
      args: ["server.js", "--flag"],
      env: [{ name: "MODE", value: "test" }],
      allowed_tools: ["lookup", "get-sum"],
      policy: "read-only lookups",
    };
    const r = validateMcpServers([entry]);
    expect(r.problems).toEqual([]);
    expect(r.servers).toEqual([{ ...entry, headers: [] }]);
  });

  it.each(["http", "streamable_http", "sse"])("keeps a %s entry with headers", (transport) => {
    const headers = [
      { name: "Authorization", value_env: "DEMO_TOKEN", prefix: "Bearer " },
      { name: "X-Team", value: "core" },
    ];
    const r = validateMcpServers([{ ...remote, transport, headers }]);
    expect(r.problems).toEqual([]);
    expect(r.servers[0]).toMatchObject({ transport, url: remote.url, headers, allowed_tools: ["search"] });
  });

  it("keeps valid entries when others are invalid, in order", () => {
    const r = validateMcpServers([stdio, { name: "bad" }, remote]);
    expect(r.servers.map((s) => s.name)).toEqual(["demo", "web"]);
    expect(r.problems).toEqual(['mcp.servers[1] "bad": command: required for stdio']);
  });
});

describe("invalid entries are excluded and each problem names entry and field", () => {
  it.each([
    ["not a table", "nope", "mcp.servers[0] (unnamed): entry: must be a table"],
    ["missing name", { command: "x" }, "mcp.servers[0] (unnamed): name: required"],
    ["bad name", { name: "has space", command: "x" }, 'mcp.servers[0] "has space": name: must match'],
    ["long name", { name: "a".repeat(65), command: "x" }, "name: must match [A-Za-z0-9._-]{1,64}"],
    [
      "unknown transport",
      { name: "d", transport: "websocket", command: "x" },
      'mcp.servers[0] "d": transport: must be one of stdio, http, streamable_http, sse',
    ],
    ["stdio without command", { name: "d" }, 'mcp.servers[0] "d": command: required for stdio'],
    ["empty command", { name: "d", command: " " }, "command: must be a non-empty string"],
    ["args not strings", { name: "d", command: "x", args: ["a", 1] }, "args: must be a list of strings"],
    [
      "env not a list",
      { name: "d", command: "x", env: { A: "1" } },
      "env: must be a list of {name, value | value_env, secret?} tables",
    ],
    [
      "env bad name",
      { name: "d", command: "x", env: [{ name: "1A", value: "v" }] },
      "env[0].name: must be an environment variable name",
    ],
    [
      "env missing value",
      { name: "d", command: "x", env: [{ name: "A" }] },
      "env[0]: needs exactly one of value or value_env",
    ],
    [
      "env with both value and value_env",
      { name: "d", command: "x", env: [{ name: "A", value: "v", value_env: "B" }] },
      "env[0]: needs exactly one of value or value_env",
    ],
    [
      "env unknown key",
      { name: "d", command: "x", env: [{ name: "A", value: "v", sekret: true }] },
      "env[0].sekret: unknown key",
    ],
    [
      "env secret not a bool",
      { name: "d", command: "x", env: [{ name: "A", value: "v", secret: "yes" }] },
      "env[0].secret: must be true or false",
    ],
    [
      "url on stdio",
      { name: "d", command: "x", url: "http://h/" },
      'mcp.servers[0] "d": url: not used by the stdio transport',
    ],
    [
      "command on http",
      { ...remote, command: "x" },
      'mcp.servers[0] "web": command: not used by the http transport',
    ],
    ["typo key", { ...stdio, allowed_tool: ["x"] }, 'mcp.servers[0] "demo": allowed_tool: unknown key'],
    [
      "allowed_tools not a list",
      { ...stdio, allowed_tools: "lookup" },
      "allowed_tools: must be a list of strings",
    ],
    [
      "allowed_tools blank",
      { ...stdio, allowed_tools: ["ok", " "] },
      "allowed_tools[1]: must be a tool name",
    ],
    ["policy not a string", { ...stdio, policy: 3 }, "policy: must be a string"],
    [
      "http without url",
      { name: "web", transport: "http" },
      'mcp.servers[0] "web": url: required for http and sse transports',
    ],
    ["url not a string", { ...remote, url: 5 }, "url: must be a string"],
    ["url does not parse", { ...remote, url: "not a url" }, "url: does not parse as a URL"],
    ["url not http", { ...remote, url: "ftp://h/x" }, "url: must be an http or https URL"],
    ["url with credentials", { ...remote, url: "https://u:p@h/x" }, "url: must not carry credentials"],
    ["headers not a list", { ...remote, headers: { A: "1" } }, "headers: must be a list of"],
    [
      "header not a table",
      { ...remote, headers: ["A: 1"] },
      "headers[0]: must be a {name, value | value_env, prefix?} table",
    ],
    [
      "header bad name",
      { ...remote, headers: [{ name: "X Bad", value: "1" }] },
      "headers[0].name: must be an HTTP header name",
    ],
    [
      "header both values",
      { ...remote, headers: [{ name: "A", value: "1", value_env: "B" }] },
      "headers[0]: needs exactly one of value or value_env",
    ],
    [
      "header no value",
      { ...remote, headers: [{ name: "A" }] },
      "headers[0]: needs exactly one of value or value_env",
    ],
    [
      "header bad value_env",
      { ...remote, headers: [{ name: "A", value_env: "not-a-name" }] },
      "headers[0].value_env: must be an environment variable name",
    ],
    [
      "header value newline",
      { ...remote, headers: [{ name: "A", value: "x\r\nEvil: 1" }] },
      "headers[0].value: must not contain CR, LF or NUL",
    ],
    [
      "header prefix newline",
      { ...remote, headers: [{ name: "A", value: "x", prefix: "a\n" }] },
      "headers[0].prefix: must not contain CR, LF or NUL",
    ],
    [
      "header prefix not string",
      { ...remote, headers: [{ name: "A", value: "x", prefix: 1 }] },
      "headers[0].prefix: must be a string",
    ],
    [
      "header unknown key",
      { ...remote, headers: [{ name: "A", value: "x", secret: true }] },
      "headers[0].secret: unknown key",
    ],
    [
      "header twice",
      {
        ...remote,
        headers: [
          { name: "A", value: "1" },
          { name: "a", value: "2" },
        ],
      },
      "headers[1].name: a is configured more than once",
    ],
  ])("%s", (_what, entry, problem) => {
    const r = validateMcpServers([entry]);
    expect(r.servers).toEqual([]);
    expect(r.problems.some((p) => p.includes(problem))).toBe(true);
  });

  it.each([
    "mcp-session-id",
    "Mcp-Protocol-Version",
    "content-type",
    "Accept",
    "host",
    "content-length",
    "last-event-id",
  ])("protocol header %s cannot be configured", (name) => {
    const r = validateMcpServers([{ ...remote, headers: [{ name, value: "x" }] }]);
    expect(r.servers).toEqual([]);
    expect(r.problems).toEqual([
      `mcp.servers[0] "web": headers[0].name: ${name} is set by the MCP transport and cannot be configured`,
    ]);
  });

  it("never repeats a header value in a problem", () => {
    const r = validateMcpServers([
      { ...remote, headers: [{ name: "Authorization", value: "Bearer sk-live-123456\n", value_env: "X" }] },
    ]);
    expect(r.problems.length).toBeGreaterThan(0);
    expect(r.problems.join("\n")).not.toContain("sk-live-123456");
  });

  it("excludes every entry that shares a name", () => {
    const r = validateMcpServers([stdio, remote, { ...stdio, command: "other" }]);
    expect(r.servers.map((s) => s.name)).toEqual(["web"]);
    expect(r.problems).toEqual([
      'mcp.servers[0] "demo": name: duplicate of mcp.servers[2]; every entry with this name is excluded',
      'mcp.servers[2] "demo": name: duplicate of mcp.servers[0]; every entry with this name is excluded',
    ]);
  });

  it("reports all problems of one entry", () => {
    const r = validateMcpServers([
      { name: "x", transport: "sse", url: "ftp://h", headers: [{ name: "host", value: "h" }] },
    ]);
    expect(r.problems).toEqual([
      'mcp.servers[0] "x": url: must be an http or https URL',
      'mcp.servers[0] "x": headers[0].name: host is set by the MCP transport and cannot be configured',
    ]);
  });
});

describe("resolveHeaders", () => {
  const srv = {
    name: "web",
    headers: [
      { name: "Authorization", value_env: "WEB_TOKEN", prefix: "Bearer " },
      { name: "X-Team", value: "core" },
    ],
  };

  it("reads value_env from the given environment and prepends the prefix", () => {
    expect(resolveHeaders(srv, { WEB_TOKEN: "abc" })).toEqual({
      ok: true,
      value: { Authorization: "Bearer abc", "X-Team": "core" },
    });
  });

  it.each([
    ["unset", {}],
    ["empty", { WEB_TOKEN: "" }],
  ])("fails closed when the variable is %s", (_what, env) => {
    const r = resolveHeaders(srv, env);
    expect(r).toEqual({
      ok: false,
      error:
        'MCP server "web": header Authorization needs environment variable WEB_TOKEN, which is not set; not connecting',
    });
  });

  it("fails closed on a value that would inject a header, without echoing it", () => {
    const r = resolveHeaders(srv, { WEB_TOKEN: "abc\r\nX-Evil: 1" });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/WEB_TOKEN \(header Authorization\) contains CR, LF or NUL/);
    expect(!r.ok && r.error).not.toContain("X-Evil");
  });
});
