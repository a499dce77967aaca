/**
 * Step parsing: lenient in *extraction*, strict in *validation*. Extraction strips a code
 * fence or prose around exactly one JSON object; validation checks the fields, the action
 * and the tool's own input schema. Nothing reaches a tool before both pass.
 */
import { clip } from "../core/clip.js";
import type { AnyTool, Result } from "../tools/types.js";

/**
 * Bytes of model text echoed back in a correction or error (issue 17 item 1): an unknown
 * action name or a tool's complaint about its input must not carry megabytes into the
 * transcript, the next request and the audit log.
 */
export const ECHO_MAX_BYTES = 256;
export const STEP_ERROR_MAX_BYTES = 2048;

export interface Step {
  thought: string;
  action: string;
  /** Always text: an object sent by the model is re-serialised to its JSON text. */
  action_input: string;
}

export interface ValidStep extends Step {
  tool: AnyTool;
  input: unknown;
}

/** Finds the top-level JSON objects in text by brace matching that respects strings. */
export function findJsonObjects(text: string): string[] {
  const found: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"' && depth > 0) inString = true;
    else if (ch === "{") {
      if (depth === 0) start = i;
      depth += 1;
    } else if (ch === "}" && depth > 0) {
      depth -= 1;
      if (depth === 0) found.push(text.slice(start, i + 1));
    }
  }
  return found;
}

/** Extracts the one step object. Errors say exactly what was wrong, for the correction observation. */
export function extractStep(text: string): Result<Record<string, unknown>> {
  const candidates = findJsonObjects(text).filter((c) => {
    try {
      JSON.parse(c);
      return true;
    } catch {
      return false;
    }
  });
  if (candidates.length === 0) {
    const trimmed = text.trim();
    return {
      ok: false,
      error:
        trimmed.length === 0
          ? "the reply was empty; reply with exactly one JSON object"
          : "the reply contains no JSON object; reply with exactly one JSON object and no other text",
    };
  }
  if (candidates.length > 1) {
    return {
      ok: false,
      error: `the reply contains ${candidates.length} JSON objects; send exactly one step per turn`,
    };
  }
  const value = JSON.parse(candidates[0]!) as unknown;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, error: "the step must be a JSON object" };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

export function validateStep(
  obj: Record<string, unknown>,
  enabled: ReadonlyMap<string, AnyTool>,
): Result<ValidStep> {
  const problems: string[] = [];
  const { thought, action } = obj;
  let actionInput = obj.action_input;
  if (typeof thought !== "string") problems.push('"thought" must be a string');
  if (typeof action !== "string") problems.push('"action" must be a string');
  if (actionInput !== undefined && typeof actionInput === "object" && actionInput !== null) {
    actionInput = JSON.stringify(actionInput);
  }
  if (typeof actionInput !== "string") problems.push('"action_input" must be a string (or a JSON object)');
  if (problems.length > 0) return { ok: false, error: problems.join("; ") };
  const tool = enabled.get(action as string);
  if (!tool) {
    return {
      ok: false,
      error: `unknown action "${clip(String(action), ECHO_MAX_BYTES)}"; use one of: ${[...enabled.keys()].join(", ")}`,
    };
  }
  const parsed = tool.parse(actionInput as string);
  if (!parsed.ok) {
    return {
      ok: false,
      error: `invalid action_input for ${tool.name}: ${clip(parsed.error, STEP_ERROR_MAX_BYTES)}`,
    };
  }
  return {
    ok: true,
    value: {
      thought: thought as string,
      action: action as string,
      action_input: actionInput as string,
      tool,
      input: parsed.value,
    },
  };
}

export function parseStep(text: string, enabled: ReadonlyMap<string, AnyTool>): Result<ValidStep> {
  const extracted = extractStep(text);
  if (!extracted.ok) return extracted;
  return validateStep(extracted.value, enabled);
}

/** The strict JSON schema of one step, for structured output. */
export function stepSchema(actions: readonly string[]): object {
  return {
    type: "object",
    properties: {
      thought: { type: "string" },
      action: { type: "string", enum: [...actions] },
      action_input: { type: "string" },
    },
    required: ["thought", "action", "action_input"],
    additionalProperties: false,
  };
}
