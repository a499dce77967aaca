/**
 * A short excerpt of an error body that is not a JSON error object: what a web server, a proxy
 * or another service answered at the URL (often a whole HTML page). The message shows a glimpse
 * of it — tags, scripts and styles taken out, entities decoded, white space collapsed, cut — so
 * the person can tell what answered without a page of markup on the terminal.
 */

/** The excerpt's length: enough for "404 Not Found nginx/1.24.0" or a framework's one-line error. */
export const BODY_EXCERPT_MAX_CHARS = 200;
/**
 * Only the start of the body is read: the text worth showing is near the top (the title, the
 * first heading), and the page may be up to the transport's 32 MiB.
 */
const SCANNED_CHARS = 64 * 1024;

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  "#39": "'",
};

/** A tag: `<name …>`, `</name>`, `<!doctype …>` or a comment's start; a lone `a < b` is not one. */
const TAG = /<\/?[A-Za-z!][^<>]*>/g;

/** Whether the text is markup rather than a message that happens to contain `<`. */
function isMarkup(text: string): boolean {
  TAG.lastIndex = 0;
  return TAG.test(text);
}

/** `text` without the content of `<script>` and `<style>` elements, in one pass over it. */
function withoutScripts(text: string): string {
  const lower = text.toLowerCase();
  const open = /<(script|style)\b/g;
  let out = "";
  let at = 0;
  for (;;) {
    open.lastIndex = at;
    const found = open.exec(lower);
    if (!found) return out + text.slice(at);
    out += `${text.slice(at, found.index)} `;
    // An element never closed hides the rest of the page, as a browser would.
    const close = lower.indexOf(`</${found[1]}`, found.index);
    const end = close === -1 ? -1 : lower.indexOf(">", close);
    if (end === -1) return out;
    at = end + 1;
  }
}

/** The visible text of an HTML page (roughly: enough for an excerpt; a comment's tags go with the rest). */
function pageText(html: string): string {
  return withoutScripts(html)
    .replace(TAG, " ")
    .replace(/&(amp|lt|gt|quot|apos|nbsp|#39);/g, (_, name: string) => ENTITIES[name] ?? " ");
}

/** One line of at most `max` characters (plus "…" when cut) from a body that is not a JSON error. */
export function bodyExcerpt(body: string, max = BODY_EXCERPT_MAX_CHARS): string {
  const head = body.slice(0, SCANNED_CHARS);
  const text = (isMarkup(head) ? pageText(head) : head).replace(/\s+/g, " ").trim();
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
