/** Path containment (src/core/inside.ts): the one isInside and shownPath every layer uses. */
import { describe, expect, it } from "vitest";
import { isInside, shownPath } from "../../src/core/inside.js";

describe("isInside(child, parent)", () => {
  const table: [child: string, parent: string, inside: boolean][] = [
    ["/a/b", "/a/b", true],
    ["/a/b/c", "/a/b", true],
    ["/a/b/c/d", "/a/b", true],
    // A shared prefix is not containment.
    ["/a/bc", "/a/b", false],
    ["/a/b-c", "/a/b", false],
    ["/a", "/a/b", false],
    ["/x/b", "/a/b", false],
    // Trailing slashes fold away on either side.
    ["/a/b/", "/a/b", true],
    ["/a/b", "/a/b/", true],
    ["/a/b/c/", "/a/b/", true],
    ["/a/bc/", "/a/b/", false],
    // `..` steps are resolved, not matched as text.
    ["/a/b/../c", "/a/b", false],
    ["/a/b/c/..", "/a/b", true],
    ["/a/b/..", "/a/b", false],
    ["/a/c/../b/d", "/a/b", true],
    ["/a/b", "/a/b/c/..", true],
    // A name that starts with two dots is a name, not a step up.
    ["/a/b/..c", "/a/b", true],
    ["/a/b/...", "/a/b", true],
    // The root contains everything, and only itself is inside itself at the top.
    ["/", "/", true],
    ["/a", "/", true],
    ["/a/b/c", "/", true],
    ["/", "/a", false],
    // Doubled slashes are one separator.
    ["/a//b/c", "/a/b", true],
    ["/a/bc", "/a//b", false],
  ];
  for (const [child, parent, inside] of table) {
    it(`${JSON.stringify(child)} in ${JSON.stringify(parent)} → ${inside}`, () => {
      expect(isInside(child, parent)).toBe(inside);
    });
  }

  it("takes the child first: the argument order is not symmetric", () => {
    expect(isInside("/a/b/c", "/a/b")).toBe(true);
    expect(isInside("/a/b", "/a/b/c")).toBe(false);
  });
});

describe("shownPath(abs, cwd)", () => {
  const table: [abs: string, cwd: string, shown: string][] = [
    ["/p/src/a.ts", "/p", "src/a.ts"],
    ["/p/a.ts", "/p/", "a.ts"],
    // The folder itself and anything outside it keep their absolute form.
    ["/p", "/p", "/p"],
    ["/p/", "/p", "/p/"],
    ["/q/a.ts", "/p", "/q/a.ts"],
    ["/pq/a.ts", "/p", "/pq/a.ts"],
    ["/a.ts", "/p", "/a.ts"],
    ["/p/../q/a.ts", "/p", "/p/../q/a.ts"],
    ["/p/..a", "/p", "..a"],
    ["/etc/passwd", "/", "etc/passwd"],
  ];
  for (const [abs, cwd, shown] of table) {
    it(`${JSON.stringify(abs)} from ${JSON.stringify(cwd)} → ${JSON.stringify(shown)}`, () => {
      expect(shownPath(abs, cwd)).toBe(shown);
    });
  }
});
