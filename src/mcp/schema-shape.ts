/**
 * A tool's input schema as the model reads it (docs/mcp.md "MCP client"): the whole shape,
 * nested objects and arrays included — `{entities: {name: string, tags?: string[]}[]}` — with
 * `?` for optional properties, enum values, unions and local `$ref`s followed. Constraints
 * (lengths, patterns, ranges) are left out: the arguments are checked against the whole schema
 * before a call is sent (args-check.ts), and the correction names what failed. The shape is
 * bounded (MCP_TOOL_ARGS_MAX_BYTES); a clipped one ends in SCHEMA_CLIPPED.
 */

/** One tool's argument shape in the prompt; beyond it the shape is cut and says so. */
export const MCP_TOOL_ARGS_MAX_BYTES = 1024;
export const SCHEMA_CLIPPED = "… (schema clipped)";
/** Nesting shown; deeper parts read `…` (a listing is the server's text, not ours to recurse without end). */
const MAX_SHAPE_DEPTH = 12;
/** Enum values shown per property. */
const MAX_SHOWN_ENUM = 6;

type Schema = Record<string, unknown>;

function isObject(v: unknown): v is Schema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

interface Walk {
  root: Schema;
  depth: number;
  /** `$ref`s being expanded on this path: a recursive one is named, not expanded again. */
  refs: readonly string[];
}

/** `#/$defs/Entity` in the tool's own schema; undefined for anything else (no fetching). */
function resolveLocalRef(root: Schema, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let at: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isObject(at) && !Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

function refName(ref: string): string {
  return ref.split("/").at(-1) || "any";
}

/** A union member inside `[]` or another union needs parentheses to read right. */
function grouped(text: string): string {
  return /[|&]/.test(text) && !/^[{[(]/.test(text) ? `(${text})` : text;
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  return unique.length === 0 ? "any" : unique.join("|");
}

function objectShape(schema: Schema, w: Walk): string {
  const props = isObject(schema.properties) ? Object.entries(schema.properties) : [];
  if (props.length === 0) {
    const extra = schema.additionalProperties;
    return isObject(extra) ? `{[key]: ${shapeOf(extra, w)}}` : "object";
  }
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [],
  );
  const shown = props.map(([name, s]) => `${name}${required.has(name) ? "" : "?"}: ${shapeOf(s, w)}`);
  return `{${shown.join(", ")}}`;
}

function shapeOf(schema: unknown, parent: Walk): string {
  const w: Walk = { ...parent, depth: parent.depth + 1 };
  if (schema === true || schema === undefined) return "any";
  if (schema === false) return "never";
  if (!isObject(schema)) return "any";
  if (w.depth > MAX_SHAPE_DEPTH) return "…";
  if (typeof schema.$ref === "string") {
    const ref = schema.$ref;
    if (w.refs.includes(ref)) return refName(ref);
    const target = resolveLocalRef(w.root, ref);
    if (target === undefined) return refName(ref);
    return shapeOf(target, { ...parent, refs: [...w.refs, ref] });
  }
  if ("const" in schema) return JSON.stringify(schema.const) ?? "any";
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.slice(0, MAX_SHOWN_ENUM).map((v) => JSON.stringify(v));
    return values.join("|") + (schema.enum.length > MAX_SHOWN_ENUM ? "|…" : "");
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const list = schema[key];
    if (Array.isArray(list) && list.length > 0) return union(list.map((s) => shapeOf(s, w)));
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const parts = schema.allOf.map((s) => shapeOf(s, w));
    return parts.length === 1 ? parts[0]! : parts.map(grouped).join(" & ");
  }
  const t = schema.type;
  const types = typeof t === "string" ? [t] : Array.isArray(t) ? t.filter((x) => typeof x === "string") : [];
  if (types.length === 0) {
    if (isObject(schema.properties)) return objectShape(schema, w);
    if (schema.items !== undefined || Array.isArray(schema.prefixItems)) return arrayShape(schema, w);
    return "any";
  }
  return union(
    types.map((type) => {
      if (type === "object") return objectShape(schema, w);
      if (type === "array") return arrayShape(schema, w);
      return type;
    }),
  );
}

function arrayShape(schema: Schema, w: Walk): string {
  const tuple = Array.isArray(schema.prefixItems)
    ? schema.prefixItems
    : Array.isArray(schema.items)
      ? schema.items
      : undefined;
  if (tuple) return `[${tuple.map((s) => shapeOf(s, w)).join(", ")}]`;
  return `${grouped(shapeOf(schema.items, w))}[]`;
}

/** The whole argument shape, unbounded: `{path: string, tail?: number}`; `{}` when the tool takes none. */
export function schemaShape(schema: Record<string, unknown>): string {
  const props = isObject(schema.properties) ? schema.properties : undefined;
  if (!props || Object.keys(props).length === 0) {
    // A top level with no properties still tells a map of values apart from "no arguments".
    return isObject(schema.additionalProperties)
      ? `{[key]: ${shapeOf(schema.additionalProperties, { root: schema, depth: 0, refs: [] })}}`
      : "{}";
  }
  return objectShape(schema, { root: schema, depth: 0, refs: [] });
}

/**
 * The shape within `maxBytes`: cut after the last whole property that fits, then
 * SCHEMA_CLIPPED, so the model knows there is more (and the argument check still sees it all).
 */
export function boundedSchemaShape(
  schema: Record<string, unknown>,
  maxBytes: number = MCP_TOOL_ARGS_MAX_BYTES,
): string {
  const full = schemaShape(schema);
  if (Buffer.byteLength(full) <= maxBytes) return full;
  const room = Math.max(0, maxBytes - Buffer.byteLength(SCHEMA_CLIPPED));
  let cut = full.slice(0, room);
  while (Buffer.byteLength(cut) > room) cut = cut.slice(0, -1);
  const boundary = cut.lastIndexOf(", ");
  if (boundary > 0) cut = cut.slice(0, boundary);
  return `${cut}${SCHEMA_CLIPPED}`;
}
