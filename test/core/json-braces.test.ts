import { describe, expect, it } from "vitest";
import { type BraceEvent, walkBraces } from "../../src/core/json-braces.js";

function events(text: string): string {
  const out: string[] = [];
  walkBraces(text, 0, (i, event: BraceEvent, depth) => {
    if (event !== "other") out.push(`${event}@${i}:${depth}`);
    return false;
  });
  return out.join(" ");
}

describe("walkBraces", () => {
  it("counts braces outside strings only", () => {
    expect(events('{"a":"}{"}')).toBe("open@0:1 close@9:0");
    expect(events('{"a":"\\"}"}')).toBe("open@0:1 close@10:0");
    expect(events('{"a":{"b":1}}')).toBe("open@0:1 open@5:2 close@11:1 close@12:0");
  });

  it("lets prose quotes outside braces open no string", () => {
    expect(events('he said "hi {" {"x":1}')).toBe("open@12:1");
    expect(events('"{"')).toBe("open@1:1");
  });

  it("ignores a close brace with nothing open, and returns the depth it ended at", () => {
    expect(events("} {")).toBe("open@2:1");
    expect(walkBraces("{ {", 0, () => false)).toBe(2);
    expect(walkBraces('{"a":"}', 0, () => false)).toBe(1);
  });

  it("starts at `from` and stops where the visitor says", () => {
    const seen: number[] = [];
    walkBraces("{a}{b}", 3, (i) => {
      seen.push(i);
      return i === 4;
    });
    expect(seen).toEqual([3, 4]);
  });
});
