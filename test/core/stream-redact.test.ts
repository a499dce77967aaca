/**
 * The streaming redactor (src/core/stream-redact.ts): whatever the cut points of a stream,
 * the released text never holds a credential, and it adds up to the redacted whole.
 */
import { afterEach, describe, expect, it } from "vitest";
import { registerSecret, resetSecretsForTest } from "../../src/core/redact.js";
import { redactStreamedEvents, StreamRedactor, safeCut } from "../../src/core/stream-redact.js";

afterEach(() => resetSecretsForTest());

const PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAx7\nabc def\n-----END RSA PRIVATE KEY-----";

/** Every way to cut `text` into two pieces, and one piece per character. */
function splits(text: string): string[][] {
  const out: string[][] = [[...text]];
  for (let i = 1; i < text.length; i++) out.push([text.slice(0, i), text.slice(i)]);
  return out;
}

function run(pieces: string[]): { released: string[]; all: string } {
  const r = new StreamRedactor();
  const released = pieces.map((p) => r.push(p));
  released.push(r.end());
  return { released, all: released.join("") };
}

const CASES: { name: string; text: string; secrets?: string[]; hidden: string[] }[] = [
  { name: "an sk- key", text: "the key is sk-abcdefghijklmnop1234 ok", hidden: ["abcdefghijklmnop1234"] },
  { name: "Bearer token", text: "send Bearer abcdefgh12345678 then", hidden: ["abcdefgh12345678"] },
  { name: "Bearer, many spaces", text: "send Bearer    abcdefgh12345678 then", hidden: ["abcdefgh12345678"] },
  { name: "a PEM block", text: `key: ${PEM} done`, hidden: ["MIIEpAIBAAKCAQEAx7", "abc def"] },
  {
    name: "a registered value with spaces",
    text: "the phrase correct horse battery staple is it",
    secrets: ["correct horse battery staple"],
    hidden: ["correct horse", "battery staple", "horse battery"],
  },
  {
    name: "a registered prefix + value (MCP header)",
    text: "hdr tok inlinecred-2d8e4b6a0c sent",
    secrets: ["inlinecred-2d8e4b6a0c", "tok inlinecred-2d8e4b6a0c"],
    hidden: ["inlinecred", "2d8e4b6a0c"],
  },
  { name: "a GitHub token", text: "gh ghp_abcdefghijklmnop1234 x", hidden: ["abcdefghijklmnop1234"] },
];

describe("StreamRedactor: every cut of every credential", () => {
  for (const c of CASES) {
    it(c.name, () => {
      for (const s of c.secrets ?? []) registerSecret(s);
      for (const pieces of splits(c.text)) {
        const { released, all } = run(pieces);
        for (const piece of [...released, all]) for (const h of c.hidden) expect(piece).not.toContain(h);
        expect(all).toContain("[REDACTED]");
      }
    });
  }

  it("plain text is released at the last white space, at once", () => {
    const r = new StreamRedactor();
    expect(r.push("The answer is 42.\nIt qu")).toBe("The answer is 42.\nIt ");
    expect(r.push("otes done")).toBe("quotes ");
    expect(r.end()).toBe("done");
  });

  it("a tail that could begin a spaced secret is held, and released once it cannot", () => {
    registerSecret("correct horse battery staple");
    const r = new StreamRedactor();
    expect(r.push("say correct ")).toBe("say ");
    expect(r.push("horses now ")).toBe("correct horses now ");
  });

  it("safeCut never cuts right after Bearer or inside an open PEM block", () => {
    expect(safeCut("a Bearer ")).toBe(2);
    expect(safeCut("x -----BEGIN RSA ")).toBe(2);
    expect(safeCut(`x ${PEM.slice(0, 40)} `)).toBe(2);
  });
});

describe("redactStreamedEvents", () => {
  it("redacts every *_delta piece, keeps streams apart, and releases tails before other events", () => {
    const seen: { type: string; text?: string }[] = [];
    const on = redactStreamedEvents<{ type: string; text?: string; turn?: number }>((e) => seen.push(e));
    on({ type: "thought_delta", turn: 1, text: "the key sk-abcd" });
    on({ type: "thought_delta", turn: 1, text: "efghijklmnop tail" });
    on({ type: "answer_delta", text: "now Bearer " });
    on({ type: "answer_delta", text: "abcdefgh12345678 x" });
    // A delta type nobody knew of yet is covered by construction.
    on({ type: "reasoning_delta", turn: 2, text: "key ghp_abcdefgh" });
    on({ type: "reasoning_delta", turn: 2, text: "ijklmnop1234 y" });
    on({ type: "final" });
    const text = seen.map((e) => e.text ?? `<${e.type}>`).join("|");
    expect(text).not.toMatch(/abcdefghijklmnop|abcdefgh12345678|ghp_abcd/);
    expect(text).toBe("the key |[REDACTED] |tail|now |[REDACTED] |x|key |[REDACTED] |y|<final>");
    expect(seen.at(-1)).toEqual({ type: "final" });
  });
});
