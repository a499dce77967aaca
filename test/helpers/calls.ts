/**
 * Call records for tests that exercise one consumer (an approver, the editor's updates): made
 * by the real pipeline's `prepareCall` with the real tools and gate, so a test never builds a
 * record by hand that the pipeline could not make.
 */
import os from "node:os";
import { prepareCall } from "../../src/agent/call-prepare.js";
import type { Prepared, Ready } from "../../src/agent/call-record.js";
import { defaultConfig, type PolicyMode } from "../../src/config/schema.js";
import { buildGateSettings } from "../../src/policy/settings.js";
import { TOOLS_BY_NAME } from "../../src/tools/registry.js";

/** A prepared record of `action raw`, judged in `mode` (default unrestricted: the consumer under test, not the gate, is the subject) for a project at `cwd`. */
export function preparedCall(
  action: string,
  raw: string | object,
  opts: { cwd?: string; mode?: PolicyMode } = {},
): Prepared {
  const cwd = opts.cwd ?? os.tmpdir();
  const settings = buildGateSettings(defaultConfig(), cwd, { mode: opts.mode ?? "unrestricted" });
  const text = typeof raw === "string" ? raw : JSON.stringify(raw);
  return prepareCall(action, text, { settings, tools: TOOLS_BY_NAME });
}

/** The same, for a call the gate must allow. */
export function readyCall(
  action: string,
  raw: string | object,
  opts: { cwd?: string; mode?: PolicyMode } = {},
): Ready {
  const p = preparedCall(action, raw, opts);
  if (p.kind !== "ready") throw new Error(`${action} ${JSON.stringify(raw)} was not allowed: ${p.kind}`);
  return p;
}
