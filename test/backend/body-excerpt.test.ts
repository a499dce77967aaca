/** The excerpt of an error body that is not a JSON error (src/backend/body-excerpt.ts). */
import { describe, expect, it } from "vitest";
import { BODY_EXCERPT_MAX_CHARS, bodyExcerpt } from "../../src/backend/body-excerpt.js";

describe("bodyExcerpt", () => {
  it("an HTML page becomes its text: no tags, scripts, styles; entities decoded; one line", () => {
    const page =
      "<!doctype html><html><head><title>Not Found</title><script>let a = '<b>' ;</script>" +
      "<style>p{}</style></head>\n<body><h1>Oops &amp; sorry</h1>\n\n<p>Try&nbsp;again</p></body></html>";
    expect(bodyExcerpt(page)).toBe("Not Found Oops & sorry Try again");
  });

  it("plain text keeps a lone < and >, collapsed to one line", () => {
    expect(bodyExcerpt("404 page not found\n  because a < b > c")).toBe(
      "404 page not found because a < b > c",
    );
  });

  it(`is cut at ${BODY_EXCERPT_MAX_CHARS} characters and says so`, () => {
    const out = bodyExcerpt(`<p>${"word ".repeat(1000)}</p>`);
    expect(out).toHaveLength(BODY_EXCERPT_MAX_CHARS + 1);
    expect(out.endsWith("…")).toBe(true);
  });

  it("an element never closed hides the rest, as in a browser", () => {
    expect(bodyExcerpt("<h1>Bad gateway</h1><script>never closed <p>secret")).toBe("Bad gateway");
  });
});
