/**
 * Session transcripts: `state/sessions/<id>.jsonl`, one `{"role","content"}` message per
 * line, appended as it happens. At the size cap the file is rotated to `.1` before the
 * append (one backup kept), so a long-running daemon job never grows one file without bound.
 */
import fs from "node:fs";
import path from "node:path";
import type { Result } from "../tools/types.js";
import { fileSize, needsLeadingNewline } from "./jsonl.js";
import { type ByteLine, type JsonlItem, jsonlItem, readByteLinesSync, readJsonl, readJsonlSync } from "./lines.js";
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

/** Reads a transcript, rotated part first, line by line. Bad lines are skipped with warnings. */
export function readSession(file: string): { messages: Message[]; warnings: string[] } {
  const messages: Message[] = [];
  const warnings: string[] = [];
  for (const f of [`${file}.1`, file]) {
    for (const item of readJsonlSync(f, isMessage)) {
      if (item.warning !== undefined) warnings.push(item.warning);
      else messages.push(item.record);
    }
  }
  return { messages, warnings };
}

/** readSession as it reads: each message or warning as soon as its line is read (issue 16). */
export async function* streamSession(file: string): AsyncGenerator<JsonlItem<Message>> {
  for (const f of [`${file}.1`, file]) yield* readJsonl(f, isMessage);
}

export interface SessionSummary {
  id: string;
  modified: number;
  messages: number;
  firstUser: string;
}

const ROLE_PREFIXES = ["system", "user", "assistant"].map((r) => Buffer.from(`{"role":"${r}","content":"`));

/**
 * True when a line is a message exactly as openSession writes it: `{"role":…,"content":"…"}`
 * with the content string closed (an unescaped quote before the final brace). Such a line is
 * counted without being decoded or parsed; any other line goes through the full parser.
 */
function isWriterRecord(data: Buffer): boolean {
  const n = data.length;
  let end = n;
  if (end > 0 && data[end - 1] === 13) end -= 1; // "\r\n" line ends
  if (end < 2 || data[end - 1] !== 0x7d || data[end - 2] !== 0x22) return false;
  let backslashes = 0;
  for (let i = end - 3; i >= 0 && data[i] === 0x5c; i--) backslashes += 1;
  if (backslashes % 2 !== 0) return false;
  return ROLE_PREFIXES.some((p) => end - 2 >= p.length && data.subarray(0, p.length).equals(p));
}

/**
 * The first user message and the message count of one transcript, read line by line: lines
 * up to the first user message are parsed, later ones are only counted (issue 16: `sessions
 * list` reads what it prints and keeps nothing of the file).
 */
function summariseTranscript(file: string, warnings: string[]): { messages: number; firstUser: string } {
  let messages = 0;
  let firstUser: string | undefined;
  for (const f of [`${file}.1`, file]) {
    for (const line of readByteLinesSync(f)) {
      if (firstUser !== undefined && line.data !== undefined && isWriterRecord(line.data)) {
        messages += 1;
        continue;
      }
      const item = jsonlItem(decodedLine(line), f, isMessage);
      if (item === undefined) continue;
      if (item.warning !== undefined) {
        warnings.push(item.warning);
        continue;
      }
      messages += 1;
      if (firstUser === undefined && item.record.role === "user") firstUser = item.record.content;
    }
  }
  return { messages, firstUser: firstUser ?? "" };
}

function decodedLine(line: ByteLine) {
  return { ...line, text: line.data?.toString("utf8") };
}

/** Every transcript, newest first by modification time; `.1` rotated parts are read with their live file. */
export function listSessions(sessionsDir: string): { sessions: SessionSummary[]; warnings: string[] } {
  let names: string[];
  try {
    names = fs.readdirSync(sessionsDir);
  } catch {
    return { sessions: [], warnings: [] };
  }
  const found: { id: string; file: string; modified: number }[] = [];
  for (const name of names) {
    if (!name.endsWith(".jsonl")) continue;
    const file = path.join(sessionsDir, name);
    let modified: number;
    try {
      modified = fs.statSync(file).mtimeMs;
    } catch {
      continue; // removed since readdir
    }
    found.push({ id: name.slice(0, -".jsonl".length), file, modified });
  }
  // Sorted before any file is opened: a caller that shows only the newest reads only those.
  found.sort((a, b) => b.modified - a.modified || a.id.localeCompare(b.id));
  const sessions: SessionSummary[] = [];
  const warnings: string[] = [];
  for (const s of found) {
    const { messages, firstUser } = summariseTranscript(s.file, warnings);
    sessions.push({ id: s.id, modified: s.modified, messages, firstUser });
  }
  return { sessions, warnings };
}
