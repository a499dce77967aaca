/**
 * Validation that cannot stall (docs/mcp.md "MCP client", docs/commands.md "Answers in a
 * schema"): the instance is the model's text, up to hundreds of kilobytes, and the schema is a
 * server's (or the operator's) text, so neither may decide how long Scoot stands still. A check
 * runs synchronously on the one thread every session, deadline and Ctrl-C share; it is made
 * bounded two ways:
 *
 * - `uniqueItems` is checked in linear time. Ajv compares every pair of items (quadratic: a
 *   473 KB array took 20–42 s); here each item's canonical JSON (object keys sorted, so key
 *   order does not matter, as in JSON Schema's equality) goes into a map, and the first repeat
 *   names both positions as Ajv does (`must NOT have duplicate items (items ## 7 and 9 are
 *   identical)`).
 * - Every compile and every validation runs under a wall-clock budget, SCHEMA_CHECK_BUDGET_MS,
 *   through `vm`'s timeout, which stops the JavaScript running on this thread however it got
 *   there. That covers what no keyword rewrite can: a `$ref`/`anyOf` chain that doubles the
 *   work at each level (2^n checks of one value), a `pattern` whose RE2 program is large (RE2
 *   is linear in the text, times the program's size: a 30-character pattern against 100 KB took
 *   10 s), `patternProperties` times many keys, a large `enum` of objects times many items.
 *   What ran out of budget was not checked: the caller says what that means (an MCP call is
 *   left to the server, an answer gets a correction).
 *
 * `pattern` itself already runs on re2js (src/mcp/args-check.ts), never on the backtracking
 * engine, and `format` is not validated; the budget is the bound for everything else.
 */
import vm from "node:vm";

/**
 * How long one compile or one validation may run. Ordinary schemas and instances take
 * milliseconds. An MCP call is checked at step validation and again just before it is sent
 * (within its deadline), each time at most a compile (once per schema) and a validation: a call
 * ends within its deadline plus twice this.
 */
export const SCHEMA_CHECK_BUDGET_MS = 500;

/** What Ajv offers for replacing a keyword (the part used here). */
export interface KeywordHost {
  removeKeyword(keyword: string): unknown;
  addKeyword(definition: object): unknown;
}

let sandbox: { context: vm.Context; script: vm.Script } | undefined;

/**
 * `work()` run for at most `budgetMs` of wall-clock time: `{ done: false }` when it was stopped.
 * Errors it throws pass through. Whatever it was doing is abandoned mid-way, so it must leave no
 * shared state half-made that matters (a validator's run does not; a compile's cache entry is
 * never used again, its schema is marked unusable by the caller).
 */
export function withinBudget<T>(
  work: () => T,
  budgetMs: number = SCHEMA_CHECK_BUDGET_MS,
): { done: true; value: T } | { done: false } {
  sandbox ??= { context: vm.createContext({}), script: new vm.Script("run()") };
  const { context, script } = sandbox;
  context.run = work;
  try {
    return { done: true, value: script.runInContext(context, { timeout: budgetMs }) as T };
  } catch (e) {
    if ((e as { code?: unknown }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT") return { done: false };
    throw e;
  } finally {
    context.run = undefined;
  }
}

/** A piece of canonical JSON already written (brackets, commas, a key and its colon). */
class Piece {
  constructor(readonly text: string) {}
}
const OPEN_ARRAY = new Piece("[");
const CLOSE_ARRAY = new Piece("]");
const OPEN_OBJECT = new Piece("{");
const CLOSE_OBJECT = new Piece("}");
const COMMA = new Piece(",");

/**
 * A JSON value's text with every object's keys sorted: two values are equal as JSON Schema
 * compares them (`uniqueItems`, `enum`, `const`) exactly when their canonical texts are. Built
 * without recursion, so nesting as deep as the parser allowed cannot overflow the stack.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  const todo: unknown[] = [value];
  while (todo.length > 0) {
    const v = todo.pop();
    if (v instanceof Piece) out.push(v.text);
    else if (Array.isArray(v)) {
      todo.push(CLOSE_ARRAY);
      for (let i = v.length - 1; i >= 0; i--) {
        todo.push(v[i]);
        if (i > 0) todo.push(COMMA);
      }
      todo.push(OPEN_ARRAY);
    } else if (typeof v === "object" && v !== null) {
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o)
        .filter((k) => o[k] !== undefined)
        .sort();
      todo.push(CLOSE_OBJECT);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        todo.push(o[k]);
        todo.push(new Piece(`${JSON.stringify(k)}:`));
        if (i > 0) todo.push(COMMA);
      }
      todo.push(OPEN_OBJECT);
    } else out.push(v === undefined ? "null" : JSON.stringify(v));
  }
  return out.join("");
}

/** The first item equal to an earlier one, and that earlier one's position; undefined: all distinct. */
export function firstDuplicate(items: readonly unknown[]): { earlier: number; later: number } | undefined {
  const seen = new Map<string, number>();
  for (let i = 0; i < items.length; i++) {
    // Scalars keep their type in the key: 1 and "1" differ.
    const key = canonicalJson(items[i]);
    const earlier = seen.get(key);
    if (earlier !== undefined) return { earlier, later: i };
    seen.set(key, i);
  }
  return undefined;
}

interface KeywordError {
  keyword: string;
  message: string;
  params: Record<string, unknown>;
}

/** Ajv's `validate` keyword function: true when the items are distinct; else the one error Ajv would give. */
const uniqueItems: ((schema: unknown, data: unknown) => boolean) & { errors?: KeywordError[] | null } = (
  schema,
  data,
) => {
  if (schema !== true || !Array.isArray(data) || data.length < 2) return true;
  const dup = firstDuplicate(data);
  if (!dup) return true;
  uniqueItems.errors = [
    {
      keyword: "uniqueItems",
      message: `must NOT have duplicate items (items ## ${dup.earlier} and ${dup.later} are identical)`,
      params: { i: dup.later, j: dup.earlier },
    },
  ];
  return false;
};

/** Replaces Ajv's quadratic `uniqueItems` with the linear one, on this instance (its meta-schemas included). */
export function useLinearUniqueItems(ajv: KeywordHost): void {
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword({
    keyword: "uniqueItems",
    type: "array",
    schemaType: "boolean",
    errors: true,
    validate: uniqueItems,
  });
}
