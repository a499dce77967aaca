/**
 * `[[mcp.servers]]` validation. The loader hands over raw tables; this module turns each
 * into a typed `McpServerConfig` or reports exactly what is wrong with it. A bad entry is
 * excluded, never half-used: a typo in `allowed_tools`, a header or a URL must not turn
 * into a server that runs with settings the operator did not write (fail closed).
 * Problem text never repeats a header value: it may be a credential.
 */
import type { McpEnvConfig, McpHeaderConfig, McpServerConfig } from "./schema.js";

export const MCP_SERVER_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** An HTTP header name is an RFC 9110 token. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** CR, LF and NUL would let a value smuggle another header or end the request head. */
const UNSAFE_HEADER_TEXT = /[\r\n\0]/;
const MAX_TOOL_NAME_CHARS = 128;

/**
 * Headers the transport owns. Overriding them would break the session (or let config forge
 * protocol state), so configuring one is an error rather than a silent drop.
 */
export const PROTOCOL_HEADERS: ReadonlySet<string> = new Set([
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
  "content-type",
  "content-length",
  "accept",
  "host",
  "connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "keep-alive",
]);

const TRANSPORTS = ["stdio", "http", "streamable_http", "sse"] as const;
type Transport = (typeof TRANSPORTS)[number];

const COMMON_KEYS = ["name", "transport", "allowed_tools", "policy"];
const STDIO_KEYS = new Set([...COMMON_KEYS, "command", "args", "env"]);
const REMOTE_KEYS = new Set([...COMMON_KEYS, "url", "headers"]);
const HEADER_KEYS = new Set(["name", "value", "value_env", "prefix"]);
const ENV_KEYS = new Set(["name", "value", "value_env", "secret"]);

export interface McpConfigResult {
  servers: McpServerConfig[];
  /** One line per problem, each naming the entry (index and name) and the field. */
  problems: string[];
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === "string");
}

export function isRemoteTransport(t: McpServerConfig["transport"]): boolean {
  return t !== "stdio";
}

/** Validates every entry; valid ones keep their order, invalid ones are reported and dropped. */
export function validateMcpServers(raw: readonly unknown[]): McpConfigResult {
  const problems: string[] = [];
  const candidates: { index: number; server: McpServerConfig }[] = [];
  raw.forEach((entry, index) => {
    const own: string[] = [];
    const server = validateEntry(entry, own);
    const label = entryLabel(index, entry);
    for (const p of own) problems.push(`${label}: ${p}`);
    if (server && own.length === 0) candidates.push({ index, server });
  });

  // Two entries with one name are ambiguous: neither is the one the operator surely meant.
  const indexesByName = new Map<string, number[]>();
  raw.forEach((entry, index) => {
    const name = isTable(entry) && typeof entry.name === "string" ? entry.name : undefined;
    if (name === undefined || !MCP_SERVER_NAME.test(name)) return;
    indexesByName.set(name, [...(indexesByName.get(name) ?? []), index]);
  });
  const servers: McpServerConfig[] = [];
  for (const { index, server } of candidates) {
    const same = indexesByName.get(server.name) ?? [];
    if (same.length > 1) {
      const others = same.filter((i) => i !== index).map((i) => `mcp.servers[${i}]`);
      problems.push(
        `${entryLabel(index, raw[index])}: name: duplicate of ${others.join(", ")}; every entry with this name is excluded`,
      );
      continue;
    }
    servers.push(server);
  }
  return { servers, problems };
}

function entryLabel(index: number, entry: unknown): string {
  const name = isTable(entry) && typeof entry.name === "string" && entry.name !== "" ? entry.name : undefined;
  return name === undefined
    ? `mcp.servers[${index}] (unnamed)`
    : `mcp.servers[${index}] ${JSON.stringify(name)}`;
}

function validateEntry(entry: unknown, problems: string[]): McpServerConfig | undefined {
  if (!isTable(entry)) {
    problems.push("entry: must be a table");
    return undefined;
  }
  const { name } = entry;
  if (name === undefined) problems.push("name: required");
  else if (typeof name !== "string" || !MCP_SERVER_NAME.test(name)) {
    problems.push("name: must match [A-Za-z0-9._-]{1,64}");
  }

  let transport: Transport = "stdio";
  if (entry.transport !== undefined) {
    if (typeof entry.transport === "string" && (TRANSPORTS as readonly string[]).includes(entry.transport)) {
      transport = entry.transport as Transport;
    } else {
      problems.push(`transport: must be one of ${TRANSPORTS.join(", ")}`);
      return undefined;
    }
  }

  const remote = transport !== "stdio";
  const allowedKeys = remote ? REMOTE_KEYS : STDIO_KEYS;
  for (const key of Object.keys(entry)) {
    if (allowedKeys.has(key)) continue;
    if (STDIO_KEYS.has(key) || REMOTE_KEYS.has(key)) {
      problems.push(`${key}: not used by the ${transport} transport`);
    } else {
      problems.push(`${key}: unknown key`);
    }
  }

  const allowed_tools = validateAllowedTools(entry.allowed_tools, problems);
  let policy: string | undefined;
  if (entry.policy !== undefined) {
    if (typeof entry.policy === "string") policy = entry.policy;
    else problems.push("policy: must be a string");
  }

  const server: McpServerConfig = {
    name: typeof name === "string" ? name : "",
    transport,
    args: [],
    env: [],
    headers: [],
    allowed_tools,
  };
  if (policy !== undefined) server.policy = policy;

  if (remote) {
    const url = validateUrl(entry.url, problems);
    if (url !== undefined) server.url = url;
    server.headers = validateHeaders(entry.headers, problems);
  } else {
    if (typeof entry.command !== "string" || entry.command.trim() === "") {
      problems.push(
        entry.command === undefined ? "command: required for stdio" : "command: must be a non-empty string",
      );
    } else {
      server.command = entry.command;
    }
    if (entry.args !== undefined) {
      if (isStringList(entry.args)) server.args = [...entry.args];
      else problems.push("args: must be a list of strings");
    }
    server.env = validateEnv(entry.env, problems);
  }
  return server;
}

function validateAllowedTools(v: unknown, problems: string[]): string[] {
  if (v === undefined) return [];
  if (!isStringList(v)) {
    problems.push("allowed_tools: must be a list of strings");
    return [];
  }
  v.forEach((tool, i) => {
    if (tool.trim() === "" || tool.length > MAX_TOOL_NAME_CHARS || /\s/.test(tool)) {
      problems.push(
        `allowed_tools[${i}]: must be a tool name (non-empty, no spaces, at most 128 characters)`,
      );
    }
  });
  return [...v];
}

function validateUrl(v: unknown, problems: string[]): string | undefined {
  if (v === undefined) {
    problems.push("url: required for http and sse transports");
    return undefined;
  }
  if (typeof v !== "string") {
    problems.push("url: must be a string");
    return undefined;
  }
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    problems.push("url: does not parse as a URL");
    return undefined;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    problems.push("url: must be an http or https URL");
    return undefined;
  }
  if (u.username !== "" || u.password !== "") {
    // Userinfo would be printed wherever the URL is; credentials belong in headers with value_env.
    problems.push("url: must not carry credentials (use a header with value_env)");
    return undefined;
  }
  return v;
}

function validateEnv(v: unknown, problems: string[]): McpEnvConfig[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    problems.push("env: must be a list of {name, value | value_env, secret?} tables");
    return [];
  }
  const out: McpEnvConfig[] = [];
  v.forEach((item, i) => {
    const at = `env[${i}]`;
    if (!isTable(item)) {
      problems.push(`${at}: must be a {name, value | value_env, secret?} table`);
      return;
    }
    const before = problems.length;
    for (const key of Object.keys(item)) if (!ENV_KEYS.has(key)) problems.push(`${at}.${key}: unknown key`);
    const ok = typeof item.name === "string" && ENV_NAME.test(item.name);
    if (!ok) problems.push(`${at}.name: must be an environment variable name`);
    if ((item.value === undefined) === (item.value_env === undefined))
      problems.push(`${at}: needs exactly one of value or value_env`);
    if (item.value !== undefined && typeof item.value !== "string")
      problems.push(`${at}.value: must be a string`);
    else if (typeof item.value === "string" && item.value.includes("\0"))
      problems.push(`${at}.value: must not contain NUL`);
    if (
      item.value_env !== undefined &&
      (typeof item.value_env !== "string" || !ENV_NAME.test(item.value_env))
    )
      problems.push(`${at}.value_env: must be an environment variable name`);
    if (item.secret !== undefined && typeof item.secret !== "boolean")
      problems.push(`${at}.secret: must be true or false`);
    if (problems.length > before) return;
    const entry: McpEnvConfig = { name: item.name as string };
    if (typeof item.value === "string") entry.value = item.value;
    if (typeof item.value_env === "string") entry.value_env = item.value_env;
    if (item.secret === true) entry.secret = true;
    out.push(entry);
  });
  return out;
}

/** The resolved `env` of a stdio server; a `value_env` that is not set fails closed, like a header's. */
export function resolveEnv(
  server: Pick<McpServerConfig, "name" | "env">,
  env: NodeJS.ProcessEnv,
): { ok: true; value: Record<string, string> } | { ok: false; error: string } {
  const out: Record<string, string> = {};
  for (const e of server.env) {
    const value = e.value_env !== undefined ? env[e.value_env] : e.value;
    if (value === undefined || (e.value_env !== undefined && value === "")) {
      return {
        ok: false,
        error: `MCP server ${JSON.stringify(server.name)}: env ${e.name} needs environment variable ${e.value_env}, which is not set; not starting it`,
      };
    }
    if (value.includes("\0")) {
      return {
        ok: false,
        error: `MCP server ${JSON.stringify(server.name)}: environment variable ${e.value_env} (env ${e.name}) contains NUL; not starting it`,
      };
    }
    out[e.name] = value;
  }
  return { ok: true, value: out };
}

export function validateHeaders(v: unknown, problems: string[]): McpHeaderConfig[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    problems.push("headers: must be a list of {name, value | value_env, prefix?} tables");
    return [];
  }
  const out: McpHeaderConfig[] = [];
  const seen = new Set<string>();
  v.forEach((item, i) => {
    const at = `headers[${i}]`;
    if (!isTable(item)) {
      problems.push(`${at}: must be a {name, value | value_env, prefix?} table`);
      return;
    }
    const before = problems.length;
    for (const key of Object.keys(item))
      if (!HEADER_KEYS.has(key)) problems.push(`${at}.${key}: unknown key`);
    const { name, value, value_env, prefix } = item;
    if (typeof name !== "string" || !HEADER_NAME.test(name)) {
      problems.push(`${at}.name: must be an HTTP header name`);
    } else if (PROTOCOL_HEADERS.has(name.toLowerCase())) {
      problems.push(`${at}.name: ${name} is set by the MCP transport and cannot be configured`);
    } else if (seen.has(name.toLowerCase())) {
      problems.push(`${at}.name: ${name} is configured more than once`);
    } else {
      seen.add(name.toLowerCase());
    }
    if ((value === undefined) === (value_env === undefined)) {
      problems.push(`${at}: needs exactly one of value or value_env`);
    }
    if (value !== undefined) {
      if (typeof value !== "string") problems.push(`${at}.value: must be a string`);
      else if (UNSAFE_HEADER_TEXT.test(value)) problems.push(`${at}.value: must not contain CR, LF or NUL`);
    }
    if (value_env !== undefined && (typeof value_env !== "string" || !ENV_NAME.test(value_env))) {
      problems.push(`${at}.value_env: must be an environment variable name`);
    }
    if (prefix !== undefined) {
      if (typeof prefix !== "string") problems.push(`${at}.prefix: must be a string`);
      else if (UNSAFE_HEADER_TEXT.test(prefix)) problems.push(`${at}.prefix: must not contain CR, LF or NUL`);
    }
    if (problems.length !== before) return;
    const header: McpHeaderConfig = { name: name as string };
    if (typeof value === "string") header.value = value;
    if (typeof value_env === "string") header.value_env = value_env;
    if (typeof prefix === "string") header.prefix = prefix;
    out.push(header);
  });
  return out;
}

/** The resolved header values for one server; a missing or unsafe `value_env` fails closed. */
export function resolveHeaders(
  server: Pick<McpServerConfig, "name" | "headers">,
  env: NodeJS.ProcessEnv,
): { ok: true; value: Record<string, string> } | { ok: false; error: string } {
  const out: Record<string, string> = {};
  for (const h of server.headers) {
    let value = h.value;
    if (h.value_env !== undefined) {
      value = env[h.value_env];
      if (value === undefined || value === "") {
        return {
          ok: false,
          error: `MCP server ${JSON.stringify(server.name)}: header ${h.name} needs environment variable ${h.value_env}, which is not set; not connecting`,
        };
      }
      if (UNSAFE_HEADER_TEXT.test(value)) {
        return {
          ok: false,
          error: `MCP server ${JSON.stringify(server.name)}: environment variable ${h.value_env} (header ${h.name}) contains CR, LF or NUL; not connecting`,
        };
      }
    }
    out[h.name] = (h.prefix ?? "") + (value ?? "");
  }
  return { ok: true, value: out };
}
