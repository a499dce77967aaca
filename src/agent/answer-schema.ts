/**
 * Answers in a schema (`scoot --output-schema FILE -e "goal"`, the library's `outputSchema`;
 * docs/commands.md "Answers in a schema"): the final answer must be JSON valid against a JSON
 * Schema. The schema is checked and compiled before the run starts, by the same Ajv set-up as
 * MCP arguments (src/mcp/args-check.ts: the draft follows `$schema`, patterns run on RE2), so
 * a schema that cannot be used is an error before any request. During the run an answer that
 * is not JSON, or does not fit, is a correction naming each problem's JSON pointer.
 *
 * Decisions:
 * - Unlike an MCP server's schema (left to the server when Ajv cannot compile it), this one is
 *   the operator's: a schema Ajv cannot compile, or that fails its draft's meta-schema, is
 *   refused with the reason rather than silently unchecked.
 * - The answer is kept as compact JSON text (`JSON.stringify` of the parsed value), so what is
 *   printed, recorded and returned is the value that was checked.
 * - Checking an answer cannot stall the run (src/mcp/schema-bounds.ts): `uniqueItems` runs in
 *   linear time, and a check that outlasts SCHEMA_CHECK_BUDGET_MS is stopped and the answer
 *   corrected (it was not shown to fit), never accepted unchecked. The schema itself is checked
 *   and compiled before the run without that budget: it is the operator's, and nothing waits yet.
 */
import fs from "node:fs";
import path from "node:path";
import { clip } from "../core/clip.js";
import type { Result } from "../core/types.js";
import { type AjvError, ajvFor, describeError } from "../mcp/args-check.js";
import { SCHEMA_CHECK_BUDGET_MS, withinBudget } from "../mcp/schema-bounds.js";

/** A schema file larger than this is refused: it is sent with every request (the goal, the format). */
export const ANSWER_SCHEMA_MAX_BYTES = 256 * 1024;
/** Problems named per correction or refusal; the rest are counted. */
const MAX_PROBLEMS = 6;
/** The parser's message quoted back for an answer that is not JSON. */
const PARSE_ERROR_MAX_CHARS = 200;

export interface AnswerSchema {
  /** The schema as given, without `$schema` (the step format carries it; docs/commands.md). */
  schema: Record<string, unknown>;
  /** Where it came from, for messages: "the output schema FILE", or "the outputSchema". */
  source: string;
  /** What the goal's message adds: the schema the answer must fit, as JSON. */
  instruction: string;
  /** The answer text checked: the parsed value and its compact JSON text, or the problems. */
  check(answer: string): { ok: true; value: unknown; text: string } | { ok: false; error: string };
}

function problemsText(errors: readonly AjvError[] | null | undefined): string {
  const problems = [...new Set((errors ?? []).map((e) => describeError(e)))];
  const shown = problems.slice(0, MAX_PROBLEMS);
  if (problems.length > MAX_PROBLEMS) shown.push(`…and ${problems.length - MAX_PROBLEMS} more`);
  return shown.join("; ");
}

/** A schema object checked against its draft's meta-schema and compiled; `source` names it in errors. */
export function compileAnswerSchema(given: unknown, source: string): Result<AnswerSchema> {
  if (typeof given !== "object" || given === null || Array.isArray(given))
    return { ok: false, error: `${source} is not a JSON Schema: it must be a JSON object` };
  const schema = given as Record<string, unknown>;
  const { $schema: _declared, ...body } = schema;
  const ajv = ajvFor(schema);
  if (!ajv.validateSchema(body))
    return { ok: false, error: `${source} is not a valid JSON Schema: ${problemsText(ajv.errors)}` };
  let validate: ReturnType<typeof ajv.compile>;
  try {
    validate = ajv.compile(body);
  } catch (e) {
    return { ok: false, error: `${source} cannot be used as a JSON Schema: ${(e as Error).message}` };
  }
  const json = JSON.stringify(body);
  return {
    ok: true,
    value: {
      schema: body,
      source,
      instruction: `Your final answer (the action_input of the "final" step) must be a JSON value valid against this JSON Schema, given as the JSON itself, not as text about it:\n${json}`,
      check(answer) {
        let value: unknown;
        try {
          value = JSON.parse(answer);
        } catch (e) {
          return {
            ok: false,
            error: `the final answer must be JSON valid against ${source}; it is not JSON (${clip((e as Error).message, PARSE_ERROR_MAX_CHARS)})`,
          };
        }
        const checked = withinBudget(() => validate(value));
        if (!checked.done)
          return {
            ok: false,
            error: `the final answer could not be checked against ${source} within ${SCHEMA_CHECK_BUDGET_MS} ms (the schema makes checking this answer slow): give a smaller answer`,
          };
        if (!checked.value)
          return {
            ok: false,
            error: `the final answer does not fit ${source}: ${problemsText(validate.errors)}`,
          };
        return { ok: true, value, text: JSON.stringify(value) };
      },
    },
  };
}

/** `--output-schema FILE` (or the library's path): read, parsed and compiled; every failure names the file. */
export function readAnswerSchemaFile(file: string, cwd: string): Result<AnswerSchema> {
  const abs = path.resolve(cwd, file);
  let text: string;
  try {
    const size = fs.statSync(abs).size;
    if (size > ANSWER_SCHEMA_MAX_BYTES)
      return {
        ok: false,
        error: `output schema ${file} is ${size} bytes; the limit is ${ANSWER_SCHEMA_MAX_BYTES}`,
      };
    text = fs.readFileSync(abs, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : (e as Error).message;
    return { ok: false, error: `cannot read the output schema ${file}: ${why}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `output schema ${file} is not JSON: ${(e as Error).message}` };
  }
  return compileAnswerSchema(parsed, `the output schema ${file}`);
}

/**
 * The step format with the answer schema: a step is either a tool step (action_input a string,
 * as always) or the final step, whose action_input is described by the answer schema. The
 * answer schema's `$defs`/`definitions` move to the root so its `#/$defs/…` references resolve.
 */
export function stepSchemaWithAnswer(
  step: Record<string, unknown>,
  answer: AnswerSchema,
  finalAction: string,
): object {
  const props = step.properties as Record<string, { enum?: string[] }>;
  const others = (props.action?.enum ?? []).filter((a) => a !== finalAction);
  const { $defs, definitions, ...answerBody } = answer.schema;
  const branch = (action: object, input: object) => ({
    ...step,
    properties: { ...props, action, action_input: input },
  });
  return {
    anyOf: [
      ...(others.length > 0 ? [branch({ type: "string", enum: others }, { type: "string" })] : []),
      branch({ type: "string", enum: [finalAction] }, answerBody),
    ],
    ...($defs !== undefined ? { $defs } : {}),
    ...(definitions !== undefined ? { definitions } : {}),
  };
}
