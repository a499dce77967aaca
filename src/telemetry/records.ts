/**
 * One audit event → one OpenTelemetry log record (docs/telemetry.md "Telemetry and metrics"): the body is
 * the redacted `msg`; attributes carry the identity a backend deduplicates on
 * (`scoot.session_id`, `scoot.seq`, `scoot.chain`) plus run id and kind; a `tool_call` also
 * names its tool and the title the tool presents itself with (`scoot.tool`, `scoot.tool_title`,
 * the same title an editor shows); a call's records carry its fields (`scoot.tool`,
 * `scoot.decision`, `scoot.outcome`, `scoot.rule`, `scoot.exit_code`); the severity comes from the kind's audit level. A generation removed before it was exported becomes one
 * record of kind `gap` with its range.
 *
 * Only types are imported from OpenTelemetry here; the resource and scope objects are made
 * by the lazily loaded exporter (`otlp.ts`).
 */
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs";
import { presentRecorded } from "../agent/call-prepare.js";
import type { AuditLevel } from "../config/schema.js";
import { redact } from "../core/redact.js";
import type { AuditCall } from "../store/audit-readers.js";
import { type AuditKind, KIND_LEVEL } from "../store/audit-writer.js";
import type { SourceItem } from "./audit-source.js";

/** The OpenTelemetry severity numbers (logs data model) of Scoot's audit levels. */
const SEVERITY: Record<AuditLevel, { number: number; text: string }> = {
  debug: { number: 5, text: "DEBUG" },
  info: { number: 9, text: "INFO" },
  warn: { number: 13, text: "WARN" },
  error: { number: 17, text: "ERROR" },
};

type Resource = ReadableLogRecord["resource"];
type Scope = ReadableLogRecord["instrumentationScope"];

function hrTime(ms: number): [number, number] {
  const whole = Math.floor(ms);
  return [Math.floor(whole / 1000), (whole % 1000) * 1_000_000 + Math.round((ms - whole) * 1_000_000)];
}

/**
 * A `tool_call` record's message is the call as the pipeline recorded it, `<action> <raw>`: its
 * tool, and the title the tool presents (absent when the recorded text no longer validates,
 * e.g. clipped).
 */
function callAttributes(kind: string, msg: string): Record<string, string> {
  if (kind !== "tool_call") return {};
  const space = msg.indexOf(" ");
  const action = space === -1 ? msg : msg.slice(0, space);
  const shown = presentRecorded(action, space === -1 ? "" : msg.slice(space + 1));
  if (!shown.tool) return {};
  return { "scoot.tool": action, "scoot.tool_title": redact(shown.presentation.title) };
}

/** A call's fields as attributes (docs/sessions.md "Sessions and audit"): read, never parsed from `msg`. */
function fieldAttributes(call: AuditCall | undefined): Record<string, string | number> {
  if (!call || typeof call.tool !== "string") return {};
  return {
    "scoot.tool": call.tool,
    ...(typeof call.decision === "string" ? { "scoot.decision": call.decision } : {}),
    ...(typeof call.outcome === "string" ? { "scoot.outcome": call.outcome } : {}),
    ...(typeof call.rule === "string" ? { "scoot.rule": call.rule } : {}),
    ...(Number.isInteger(call.exit_code) ? { "scoot.exit_code": call.exit_code as number } : {}),
  };
}

function levelOf(kind: string): AuditLevel {
  return (KIND_LEVEL as Record<string, AuditLevel | undefined>)[kind as AuditKind] ?? "info";
}

export function toLogRecord(
  item: SourceItem,
  resource: Resource,
  scope: Scope,
  now = Date.now(),
): ReadableLogRecord {
  if (item.type === "gap") {
    const range = item.from === item.to ? `${item.from}` : `${item.from}..${item.to}`;
    return {
      hrTime: hrTime(now),
      hrTimeObserved: hrTime(now),
      severityNumber: SEVERITY.warn.number,
      severityText: SEVERITY.warn.text,
      body: `audit generation(s) ${range} were removed by retention before they were exported`,
      resource,
      instrumentationScope: scope,
      attributes: {
        "scoot.kind": "gap",
        "scoot.gap_from": item.from,
        "scoot.gap_to": item.to,
        "scoot.chain": item.chain,
      },
      droppedAttributesCount: 0,
    };
  }
  const e = item.event;
  const sev = SEVERITY[levelOf(e.kind)];
  return {
    hrTime: hrTime(e.ts),
    hrTimeObserved: hrTime(now),
    severityNumber: sev.number,
    severityText: sev.text,
    // Redacted when written; again here, for credentials this process knows of (the headers).
    body: redact(e.msg),
    resource,
    instrumentationScope: scope,
    attributes: {
      "scoot.session_id": e.session_id,
      ...(e.run_id !== undefined ? { "scoot.run_id": e.run_id } : {}),
      "scoot.seq": e.seq,
      "scoot.kind": e.kind,
      "scoot.chain": item.chain,
      "scoot.generation": item.generation,
      ...fieldAttributes(e.call),
      ...callAttributes(e.kind, e.msg),
    },
    droppedAttributesCount: 0,
  };
}
