/**
 * Session transcripts: `state/sessions/<id>.jsonl`, one `{"role","content"}` message per
 * line, appended as it happens. At the size cap the file is rotated to `.1` before the
 * append (one backup kept), so a long-running daemon job never grows one file without bound.
 */
import fs from "node:fs";
import path from "node:path";
import type { Result } from "../tools/types.js";
import { fileSize, needsLeadingNewline, parseJsonl, readTextIfExists } from "./jsonl.js";
import { redact } from "./redact.js";

export const SESSION_MAX_BYTES = 8 * 1024 * 1024;
export const SESSION_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

export type Role = "system" | "user" | "assistant";
export interface Message {
  role: Role;
  content: string;
}

export function validateSessionId(id: string): Result<string> {
  if (!SESSION_ID_PATTERN.test(id) || id === "." || id === "..") {
    return {
      ok: false,
      error: `invalid session id "${id}": use 1-128 characters from A-Z a-z 0-9 . _ - (and not "." or "..")`,
    };
  }
  return { ok: true, value: id };
}

export function newSessionId(kind: "cli" | "repl"): string {
  return `${kind}-${Date.now()}-${process.pid}`;
}

export function jobSessionId(jobId: string): string {
  return `job-${jobId}`;
}

export function sessionPath(sessionsDir: string, id: string): string {
  return path.join(sessionsDir, `${id}.jsonl`);
}

export interface SessionWriter {
  id: string;
  path: string;
  append(message: Message): void;
}

export function openSession(sessionsDir: string, id: string, maxBytes = SESSION_MAX_BYTES): SessionWriter {
  const file = sessionPath(sessionsDir, id);
  let checkedTail = false;
  return {
    id,
    path: file,
    append(message: Message): void {
      const line = `${JSON.stringify({ role: message.role, content: redact(message.content) })}\n`;
      const bytes = Buffer.byteLength(line);
      const size = fileSize(file);
      if (size > 0 && size + bytes > maxBytes) {
        fs.renameSync(file, `${file}.1`);
        checkedTail = true;
      }
      if (!checkedTail) {
        checkedTail = true;
        if (needsLeadingNewline(file)) {
          fs.appendFileSync(file, `\n${line}`, { mode: 0o600 });
          return;
        }
      }
      fs.appendFileSync(file, line, { mode: 0o600 });
    },
  };
}

function isMessage(v: unknown): v is Message {
  const m = v as Message;
  return (
    typeof m === "object" &&
    m !== null &&
    (m.role === "system" || m.role === "user" || m.role === "assistant") &&
    typeof m.content === "string"
  );
}

/** Reads a transcript, rotated part first. Bad lines are skipped with warnings. */
export function readSession(file: string): { messages: Message[]; warnings: string[] } {
  const messages: Message[] = [];
  const warnings: string[] = [];
  for (const f of [`${file}.1`, file]) {
    const text = readTextIfExists(f);
    if (text === undefined) continue;
    const parsed = parseJsonl(text, f, isMessage);
    messages.push(...parsed.records);
    warnings.push(...parsed.warnings);
  }
  return { messages, warnings };
}

export interface SessionSummary {
  id: string;
  modified: number;
  messages: number;
  firstUser: string;
}

export function listSessions(sessionsDir: string): { sessions: SessionSummary[]; warnings: string[] } {
  let names: string[];
  try {
    names = fs.readdirSync(sessionsDir);
  } catch {
    return { sessions: [], warnings: [] };
  }
  const sessions: SessionSummary[] = [];
  const warnings: string[] = [];
  for (const name of names) {
    if (!name.endsWith(".jsonl")) continue;
    const id = name.slice(0, -".jsonl".length);
    const file = path.join(sessionsDir, name);
    // A planted symlink, FIFO or unreadable entry is skipped with a warning (issue 17 item 7).
    let st: fs.Stats;
    let read: ReturnType<typeof readSession>;
    try {
      st = fs.lstatSync(file);
      read = readSession(file);
    } catch (e) {
      warnings.push(`skipped ${name}: ${(e as Error).message}`);
      continue;
    }
    warnings.push(...read.warnings);
    const first = read.messages.find((m) => m.role === "user");
    sessions.push({
      id,
      modified: st.mtimeMs,
      messages: read.messages.length,
      firstUser: first ? first.content : "",
    });
  }
  sessions.sort((a, b) => b.modified - a.modified || a.id.localeCompare(b.id));
  return { sessions, warnings };
}
