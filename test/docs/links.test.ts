/**
 * README.md and docs/*.md: every relative link names a file that exists, and every #anchor a
 * heading of that page (GitHub's heading ids); every docs page is linked from the README and
 * listed by `scoot --help`.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { USAGE } from "../../src/cli/args.js";
import { REPO_ROOT } from "../helpers/cli.js";

const DOCS = path.join(REPO_ROOT, "docs");
const pages = [
  path.join(REPO_ROOT, "README.md"),
  ...fs
    .readdirSync(DOCS)
    .filter((n) => n.endsWith(".md"))
    .sort()
    .map((n) => path.join(DOCS, n)),
];

/** Lines outside fenced code blocks: a `# comment` in a shell block is no heading. */
function prose(text: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) out.push(line);
  }
  return out;
}

/** GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingIds(text: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const slug = m[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    ids.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return ids;
}

/** `[text](target)` outside code: inline code spans are blanked first. */
function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const line of prose(text)) {
    const plain = line.replace(/`[^`]*`/g, "``");
    for (const m of plain.matchAll(/\]\(([^)\s]+)\)/g)) targets.push(m[1]!);
  }
  return targets;
}

function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  for (const target of linkTargets(fs.readFileSync(page, "utf8"))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [file, anchor] = target.split("#", 2) as [string, string | undefined];
    const resolved = file === "" ? page : path.resolve(path.dirname(page), decodeURIComponent(file));
    if (!fs.existsSync(resolved)) {
      broken.push(`${target}: no file ${path.relative(REPO_ROOT, resolved)}`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!resolved.endsWith(".md")) {
      broken.push(`${target}: an anchor into a file that is not Markdown`);
      continue;
    }
    if (!headingIds(fs.readFileSync(resolved, "utf8")).has(anchor)) {
      broken.push(`${target}: no heading #${anchor} in ${path.relative(REPO_ROOT, resolved)}`);
    }
  }
  return broken;
}

describe("the checker itself", () => {
  it("computes GitHub's heading ids", () => {
    const ids = headingIds(
      "# Scoot\n## The daemon: `scoot daemon run [--ticks N]` / `status [--json]` / `stop`\n" +
        "### Editors (ACP)\n```sh\n# not a heading\n```\n## Notes\n## Notes\n",
    );
    expect([...ids]).toEqual([
      "scoot",
      "the-daemon-scoot-daemon-run---ticks-n--status---json--stop",
      "editors-acp",
      "notes",
      "notes-1",
    ]);
  });

  it("finds a missing file and a missing anchor", () => {
    const dir = fs.mkdtempSync(path.join(REPO_ROOT, "node_modules", ".links-"));
    try {
      const page = path.join(dir, "a.md");
      fs.writeFileSync(path.join(dir, "b.md"), "# B\n## Here\n");
      fs.writeFileSync(
        page,
        "# A\n[ok](b.md#here) [self](#a) [gone](c.md) [bad](b.md#there) [me](#nope)\n" +
          "`[in code](x.md)`\n```\n[in a block](y.md)\n```\n[web](https://example.com/#x)\n",
      );
      expect(brokenLinks(page)).toEqual([
        "c.md: no file " + path.relative(REPO_ROOT, path.join(dir, "c.md")),
        `b.md#there: no heading #there in ${path.relative(REPO_ROOT, path.join(dir, "b.md"))}`,
        `#nope: no heading #nope in ${path.relative(REPO_ROOT, page)}`,
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("README.md and docs/", () => {
  it.each(pages.map((p) => [path.relative(REPO_ROOT, p), p]))("%s: every link resolves", (_name, page) => {
    expect(brokenLinks(page)).toEqual([]);
  });

  it("the README stays a front page (about 250 lines at most)", () => {
    const lines = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8").split("\n").length;
    expect(lines).toBeLessThanOrEqual(260);
  });

  it("every docs page is linked from the README and listed by scoot --help", () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
    const linked = new Set(linkTargets(readme).map((t) => t.split("#")[0]));
    for (const page of pages.slice(1)) {
      const rel = path.relative(REPO_ROOT, page);
      expect(linked.has(rel), `README.md does not link ${rel}`).toBe(true);
      expect(USAGE, `scoot --help does not list ${rel}`).toContain(`  ${rel} `);
    }
  });
});
