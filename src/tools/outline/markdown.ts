/**
 * Markdown headings by the CommonMark block rules that matter for an outline: ATX
 * (`#`..`######`) and setext (`===` / `---` under a paragraph) headings, never inside
 * fenced code blocks, indented code or YAML front matter. Entries are shown in ATX form
 * and indented by level.
 */
import { type Collected, clipSignature, collector } from "./entry.js";

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const ATX = /^ {0,3}(#{1,6})(?=[ \t]|$)(.*)$/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
const THEMATIC_BREAK = /^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$/;
/** Lines that start a block which cannot become a setext heading's text. */
const NON_PARAGRAPH_START =
  /^ {0,3}(?:>|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|<!--|<\/?[A-Za-z][\w-]*(?:\s[^>]*)?\/?>\s*$)/;

export function outlineMarkdown(text: string, limit: number): Collected {
  const out = collector(limit);
  const lines = text.split(/\r?\n/);
  let fence: { char: string; len: number } | undefined;
  // The open paragraph: its first line and text, a setext underline turns it into a heading.
  let para: { line: number; text: string; blocked: boolean } | undefined;
  let i = skipFrontMatter(lines);
  for (; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (fence) {
      const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
      if (close?.[1] && close[1][0] === fence.char && close[1].length >= fence.len) fence = undefined;
      continue;
    }
    const open = FENCE_OPEN.exec(line);
    // A backtick fence's info string may not contain backticks (that is inline code).
    if (open?.[1] && !(open[1][0] === "`" && (open[2] ?? "").includes("`"))) {
      fence = { char: open[1][0] ?? "`", len: open[1].length };
      para = undefined;
      continue;
    }
    if (line.trim() === "") {
      para = undefined;
      continue;
    }
    const atx = ATX.exec(line);
    if (atx?.[1]) {
      const level = atx[1].length;
      // The closing sequence is optional and must be preceded by a space (or be all there is).
      const title = (atx[2] ?? "")
        .trim()
        .replace(/(?:^|[ \t]+)#+$/, "")
        .trim();
      const at = i + 1;
      out.add(() => heading(at, level, title));
      para = undefined;
      continue;
    }
    const under = SETEXT_UNDERLINE.exec(line);
    if (para && !para.blocked && under?.[1]) {
      const level = under[1][0] === "=" ? 1 : 2;
      const p = para;
      out.add(() => heading(p.line, level, p.text));
      para = undefined;
      continue;
    }
    if (THEMATIC_BREAK.test(line)) {
      para = undefined;
      continue;
    }
    if (NON_PARAGRAPH_START.test(line)) {
      // Quotes, list items and HTML (with their lazy continuation lines) are never the
      // text of a setext heading: a `---` after them is a thematic break.
      para = { line: i + 1, text: "", blocked: true };
    } else if (para) {
      para.text += ` ${line.trim()}`;
    } else if (/^( {4}|\t)/.test(line)) {
      // Indented code: no paragraph, and the next plain line starts a fresh one.
    } else {
      para = { line: i + 1, text: line.trim(), blocked: false };
    }
  }
  return out;
}

function heading(line: number, level: number, title: string) {
  const text = clipSignature(`${"#".repeat(level)} ${title}`.trim());
  return { line, depth: level - 1, text };
}

/** YAML front matter (`---` on the first line up to `---` or `...`) holds no headings. */
function skipFrontMatter(lines: string[]): number {
  if ((lines[0] ?? "").trimEnd() !== "---") return 0;
  for (let i = 1; i < lines.length; i++) {
    const l = (lines[i] ?? "").trimEnd();
    if (l === "---" || l === "...") return i + 1;
  }
  return 0;
}
