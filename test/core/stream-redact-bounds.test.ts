/**
 * The streaming redactor's bounds (docs/context.md "Streaming"): whatever the cut points, what it
 * releases adds up to the one-shot redaction of the whole text, and what it holds back stays
 * under STREAM_HOLD_MAX_CHARS however long a word, a token or a PEM block goes on.
 */
import { afterEach, describe, expect, it } from "vitest";
import { REDACTED, redact, registerSecret, resetSecretsForTest } from "../../src/core/redact.js";
import { STREAM_HOLD_MAX_CHARS, StreamRedactor } from "../../src/core/stream-redact.js";

afterEach(() => resetSecretsForTest());

const PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAx7\nabc def\n-----END RSA PRIVATE KEY-----";

function run(pieces: string[]): { released: string[]; all: string } {
  const r = new StreamRedactor();
  const released = pieces.map((p) => r.push(p));
  released.push(r.end());
  return { released, all: released.join("") };
}

/** One piece per character, and every way to cut the text in two and in three. */
function splits(text: string): string[][] {
  const out: string[][] = [[...text]];
  for (let i = 1; i < text.length; i++) out.push([text.slice(0, i), text.slice(i)]);
  for (let i = 1; i < text.length; i += 3)
    for (let j = i + 1; j < text.length; j += 5)
      out.push([text.slice(0, i), text.slice(i, j), text.slice(j)]);
  return out;
}

const TABLE: { name: string; text: string; secrets?: string[]; hidden: string[] }[] = [
  {
    name: "sk- key mid-sentence",
    text: "the key is sk-abcdefghijklmnop1234 ok",
    hidden: ["abcdefghijklmnop"],
  },
  { name: "sk- key at the very end", text: "key sk-abcdefghijklmnop1234", hidden: ["abcdefghijklmnop"] },
  {
    name: "Bearer, newline and spaces",
    text: "auth: Bearer\n   abcdefgh12345678 done",
    hidden: ["abcdefgh1234"],
  },
  { name: "a PEM block", text: `key:\n${PEM}\nafter it`, hidden: ["MIIEpAIBAAKCAQEAx7", "abc def"] },
  {
    name: "a PEM block never closed",
    text: `x ${PEM.slice(0, 60)} more lines`,
    hidden: ["MIIEp", "more lines"],
  },
  {
    name: "GitHub tokens",
    text: "a ghp_abcdefghijklmnop1234 b github_pat_abcdefghij0123456789XY c",
    hidden: ["abcdefghijklmnop", "abcdefghij0123"],
  },
  { name: "AWS key id", text: "id AKIAABCDEFGHIJKLMNOP; next", hidden: ["ABCDEFGHIJKLMNOP"] },
  { name: "Slack token", text: "slack xoxb-1234567890-abc then", hidden: ["1234567890-abc"] },
  {
    name: "a connection string, spaces after ; and =",
    text: "Server=db; Password= s3cr3tvalue; Database=x",
    hidden: ["s3cr3tvalue"],
  },
  {
    name: "a connection string's first key",
    text: "AccountKey=c2VjcmV0dmFsdWU=;EndpointSuffix=x",
    hidden: ["c2VjcmV0dmFsdWU"],
  },
  {
    name: "a registered value with spaces",
    text: "the phrase correct horse battery staple is it",
    secrets: ["correct horse battery staple"],
    hidden: ["correct horse", "horse battery", "battery staple"],
  },
  {
    name: "a registered value",
    text: "token=tok-0123456789 used",
    secrets: ["tok-0123456789"],
    hidden: ["0123456789"],
  },
];

describe("StreamRedactor: every cut equals the one-shot redaction", () => {
  for (const c of TABLE) {
    it(c.name, () => {
      for (const s of c.secrets ?? []) registerSecret(s);
      const whole = redact(c.text);
      expect(whole).toContain(REDACTED);
      for (const pieces of splits(c.text)) {
        const { released, all } = run(pieces);
        for (const piece of released) for (const h of c.hidden) expect(piece).not.toContain(h);
        expect(all, JSON.stringify(pieces)).toBe(whole);
      }
    });
  }
});

describe("StreamRedactor: what it holds is bounded", () => {
  const PIECE = 8 * 1024;

  it("a word that never ends is released as it comes, all but a short tail", () => {
    const r = new StreamRedactor();
    let out = "";
    let fed = 0;
    for (let i = 0; i < 40; i++) {
      out += r.push("a".repeat(PIECE));
      fed += PIECE;
      expect(fed - out.length).toBeLessThanOrEqual(STREAM_HOLD_MAX_CHARS + PIECE);
    }
    out += r.end();
    expect(out).toBe("a".repeat(fed));
  });

  it("a key longer than the bound goes out as one REDACTED, and the text after it follows", () => {
    const text = `key: sk-${"x".repeat(3 * STREAM_HOLD_MAX_CHARS)} and then the rest`;
    for (const size of [PIECE, 1000, 7]) {
      const pieces: string[] = [];
      for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
      const r = new StreamRedactor();
      const released = pieces.map((p) => r.push(p));
      released.push(r.end());
      for (const p of released) expect(p).not.toContain("xxxxxxxx");
      expect(released.join("")).toBe(redact(text));
      expect(released.join("")).toBe(`key: ${REDACTED} and then the rest`);
    }
  });

  it("a PEM block longer than the bound is redacted whole: nothing of it leaks, what follows its END does", () => {
    const body = "MIIEpAIBAAKCAQEAx7abc/def+ghi\n".repeat(Math.ceil((3 * STREAM_HOLD_MAX_CHARS) / 30));
    const text = `here:\n-----BEGIN PRIVATE KEY-----\n${body}-----END PRIVATE KEY-----\nafter the key`;
    for (const size of [PIECE, 997, 5]) {
      const r = new StreamRedactor();
      const released: string[] = [];
      for (let i = 0; i < text.length; i += size) released.push(r.push(text.slice(i, i + size)));
      released.push(r.end());
      for (const p of released) expect(p).not.toContain("MIIEp");
      expect(released.join("")).toBe(redact(text));
      expect(released.join("")).toBe(`here:\n${REDACTED}\nafter the key`);
      // Released (as REDACTED) long before its END came.
      expect(released.slice(0, -3).join("")).toContain(REDACTED);
    }
  });

  it("a PEM block that never ends is redacted to the end of the stream, like the one-shot redaction", () => {
    const r = new StreamRedactor();
    let out = r.push("start -----BEGIN EC PRIVATE KEY-----\n");
    for (let i = 0; i < 20; i++) out += r.push(`${"QUJD".repeat(16)}\n`.repeat(128));
    expect(out).toBe(`start ${REDACTED}`);
    out += r.end();
    expect(out).toBe(`start ${REDACTED}`);
  });
});
