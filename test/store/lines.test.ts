/**
 * Streaming line readers: the same records and warnings as parsing the whole text,
 * whatever the chunking, with memory bounded whatever the file size.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseJsonl } from "../../src/store/jsonl.js";
import {
  LINE_CHUNK_BYTES,
  MAX_RECORD_LINE_BYTES,
  readJsonl,
  readJsonlSync,
  readLines,
  readLinesSync,
  scanLinesSync,
} from "../../src/store/lines.js";
import { listSessions, type Message, readSession } from "../../src/store/session.js";
import { removeDir, tempDir } from "../helpers/cli.js";

let dir: string;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => removeDir(dir));

const isObj = (v: unknown): v is { n: number } =>
  typeof v === "object" && v !== null && typeof (v as { n?: unknown }).n === "number";

async function collect<T>(gen: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of gen) out.push(x);
  return out;
}

/** Texts whose lines land on every side of a chunk boundary. */
const long = "x".repeat(LINE_CHUNK_BYTES - 5);
const TEXTS: [string, string][] = [
  ["empty", ""],
  ["one line", '{"n":1}\n'],
  ["no final newline (torn)", '{"n":1}\n{"n":2'],
  ["valid last line without newline", '{"n":1}\n{"n":2}'],
  ["blank lines", '\n\n{"n":1}\n   \n{"n":2}\n\n'],
  ["CRLF", '{"n":1}\r\n{"n":2}\r\n'],
  ["garbage and foreign records", '{"n":1}\nnot json\n{"m":2}\n[1,2]\n{"n":3}\n'],
  ["a line spanning chunks", `{"n":1,"s":"${long}${long}"}\n{"n":2}\n`],
  ["a newline right at a chunk boundary", `{"n":1,"s":"${"y".repeat(LINE_CHUNK_BYTES - 12)}"}\n{"n":2}\n`],
  ["unicode across a boundary", `{"n":1,"s":"${"é".repeat(LINE_CHUNK_BYTES / 2 + 3)}"}\n{"n":2,"s":"ψ"}\n`],
];

describe("readers agree with parsing the whole text", () => {
  it.each(TEXTS)("%s", async (_name, text) => {
    const file = path.join(dir, "f.jsonl");
    fs.writeFileSync(file, text);
    const whole = parseJsonl(text, file, isObj);
    const items = [...readJsonlSync(file, isObj)];
    const records = items.filter((i) => i.warning === undefined).map((i) => i.record);
    const warnings = items.filter((i) => i.warning !== undefined).map((i) => i.warning);
    expect(records).toEqual(whole.records);
    expect(warnings).toEqual(whole.warnings);
    expect(await collect(readJsonl(file, isObj))).toEqual(items);
  });

  it("gives the same lines sync and async, numbered from 1", async () => {
    const file = path.join(dir, "f.txt");
    fs.writeFileSync(file, "a\n\nb\nc");
    const sync = [...readLinesSync(file)];
    expect(sync.map((l) => [l.number, l.text, l.unterminated])).toEqual([
      [1, "a", false],
      [2, "", false],
      [3, "b", false],
      [4, "c", true],
    ]);
    expect(await collect(readLines(file))).toEqual(sync);
  });

  it("reads nothing from a missing file", async () => {
    const file = path.join(dir, "missing.jsonl");
    expect([...readJsonlSync(file, isObj)]).toEqual([]);
    expect(await collect(readJsonl(file, isObj))).toEqual([]);
    expect(scanLinesSync(file, () => true)).toBe(false);
  });

  it("skips an over-long line with a warning naming file, line and size, and reads on", () => {
    const file = path.join(dir, "f.jsonl");
    const cap = 1000;
    fs.writeFileSync(file, `{"n":1}\n{"n":2,"s":"${"z".repeat(3 * cap)}"}\n{"n":3}\n`);
    const lines = [...readLinesSync(file, cap)];
    expect(lines.map((l) => l.text === undefined)).toEqual([false, true, false]);
    expect(lines[1]!.bytes).toBe(Buffer.byteLength(`{"n":2,"s":"${"z".repeat(3 * cap)}"}`));
    const items = [...readJsonlSync(file, isObj)]; // under the real cap every line is kept
    expect(items.map((i) => i.record?.n)).toEqual([1, 2, 3]);
  });
});

describe("a file larger than the longest string Node can make", () => {
  // 0x1fffffe8 characters is V8's string limit; reading this file whole fails.
  const MAX_STRING = 0x1fffffe8;
  const HOLE = MAX_STRING + 64 * 1024 * 1024;
  const event = (seq: number, sid: string) =>
    JSON.stringify({ seq, ts: 1, session_id: sid, kind: "tool_call", msg: `event ${seq}` });

  /**
   * Valid lines, then a sparse hole (zeros, no newline: one line of ~576 MB), then valid lines:
   * made with truncate, so it takes no disk and no time to write.
   */
  function bigFile(file: string): void {
    const head = Array.from({ length: 500 }, (_, i) => event(i, i % 2 ? "a" : "b")).join("\n");
    fs.writeFileSync(file, `${head}\n`);
    fs.truncateSync(file, fs.statSync(file).size + HOLE);
    const tail = Array.from({ length: 500 }, (_, i) => event(1000 + i, i % 2 ? "a" : "b")).join("\n");
    fs.appendFileSync(file, `\n${tail}\n`);
    // Reading it whole would fail ("Cannot create a string longer than 0x1fffffe8 characters");
    // that is not tried here, as it would first fill this process's memory with the file.
    expect(fs.statSync(file).size).toBeGreaterThan(MAX_STRING);
  }

  it("is read line by line with bounded memory, the over-long line skipped with a warning", async () => {
    const baselinePeak = process.resourceUsage().maxRSS * 1024;
    const file = path.join(dir, "audit.jsonl");
    bigFile(file);
    try {
      const isEvent = (v: unknown): v is { seq: number } => typeof (v as { seq?: unknown })?.seq === "number";
      let records = 0;
      const warnings: string[] = [];
      for await (const item of readJsonl(file, isEvent)) {
        if (item.warning !== undefined) warnings.push(item.warning);
        else records += 1;
      }
      expect(records).toBe(1000);
      expect(warnings).toEqual([
        `${file}:501: skipped a line of ${HOLE} bytes, longer than the ${MAX_RECORD_LINE_BYTES / (1024 * 1024)} MiB a record may have`,
      ]);
      let syncRecords = 0;
      for (const item of readJsonlSync(file, isEvent)) if (item.warning === undefined) syncRecords += 1;
      expect(syncRecords).toBe(1000);
      // Peak RSS of this process (KB) grew by well below the file, which never was in memory.
      // Relative to the peak before reading: the worker's own footprint differs by Node version.
      const peak = process.resourceUsage().maxRSS * 1024;
      expect(peak - baselinePeak).toBeLessThan(HOLE / 2);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});

describe("sessions list reads what it prints", () => {
  const w = (m: Message) => JSON.stringify(m);
  const sys = w({ role: "system", content: "s" });
  const goal = w({ role: "user", content: 'the "goal" \\ with escapes' });
  const TRANSCRIPTS: [string, string, string | undefined][] = [
    ["plain", `${sys}\n${goal}\n${w({ role: "assistant", content: "a" })}\n`, undefined],
    ["torn last line", `${sys}\n${goal}\n{"role":"assistant","content":"cut`, undefined],
    ["torn line in the middle", `${sys}\n${goal}\n{"role":"user","content":"x\\"}\n${sys}\n`, undefined],
    [
      "blank lines and CRLF",
      `${sys}\r\n\r\n${goal}\r\n${w({ role: "user", content: 'ends in "}' })}\r\n`,
      undefined,
    ],
    [
      "escaped backslash before the end",
      `${sys}\n${goal}\n${w({ role: "user", content: "dir\\" })}\n`,
      undefined,
    ],
    ["foreign records", `${sys}\n${goal}\n{"role":"tool","content":"x"}\n{"other":1}\n`, undefined],
    ["no user message", `${sys}\n${w({ role: "assistant", content: "a" })}\n`, undefined],
    ["rotated part holds the goal", `${w({ role: "assistant", content: "b" })}\n`, `${sys}\n${goal}\n`],
  ];

  it.each(TRANSCRIPTS)("%s: the count and first message readSession gives", (_name, live, rotated) => {
    const file = path.join(dir, "s1.jsonl");
    fs.writeFileSync(file, live);
    if (rotated !== undefined) fs.writeFileSync(`${file}.1`, rotated);
    const full = readSession(file);
    const listed = listSessions(dir);
    expect(listed.sessions).toHaveLength(1);
    expect(listed.sessions[0]!.messages).toBe(full.messages.length);
    expect(listed.sessions[0]!.firstUser).toBe(full.messages.find((m) => m.role === "user")?.content ?? "");
    expect(listed.warnings).toEqual(full.warnings);
  });
});
