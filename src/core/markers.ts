/**
 * Defusing forged observation markers (docs/safety.md "Hostile inputs").
 *
 * A tool result is wrapped between `<<<UNTRUSTED_OBSERVATION` and `UNTRUSTED_OBSERVATION>>>`.
 * Text inside that imitates a marker could make the model believe the observation ended. A
 * model reads `untrusted_observation>>>`, `UNTRUSTED_OBSERVATION >>>`, a zero-width character
 * inside the word, fullwidth `ＵＮＴＲＵＳＴＥＤ` or Cyrillic look-alikes as the same marker, so
 * matching is done on a normalised form: NFKC (fullwidth → ASCII), lower case, look-alike
 * letters folded, and everything that is not a letter (whitespace, `_`, invisible and format
 * characters, punctuation) dropped. Every occurrence of the marker's word in that form is
 * replaced in the original text, so no spelling of it survives inside an observation.
 */

const MARKER_WORD = "untrustedobservation";
export const DEFUSED = "[marker removed]";

/** Cyrillic and Greek letters that look like the Latin letters of the marker word. */
const LOOKALIKE: Record<string, string> = {
  а: "a",
  в: "b",
  ь: "b",
  е: "e",
  і: "i",
  ո: "n",
  п: "n",
  о: "o",
  р: "r",
  г: "r",
  ѕ: "s",
  т: "t",
  и: "u",
  υ: "u",
  ѵ: "v",
  ν: "v",
  ԁ: "d",
  α: "a",
  β: "b",
  ε: "e",
  ι: "i",
  η: "n",
  ο: "o",
  τ: "t",
};

const ASCII_ONLY = /^[\x00-\x7f]*$/;
const NOT_LETTERS = /[^A-Za-z]+/g;

/** The letters one original character contributes to the normalised form. */
function fold(ch: string): string {
  let out = "";
  for (const c of ch.normalize("NFKC").toLowerCase()) {
    const mapped = LOOKALIKE[c] ?? c;
    if (mapped >= "a" && mapped <= "z") out += mapped;
  }
  return out;
}

/** Replaces every normalised occurrence of the marker word; other text is kept byte for byte. */
export function defuseMarkers(text: string): string {
  // ASCII text (most tool output) normalises to its letters in lower case: when those hold no
  // marker word there is nothing to replace, and no per-character work is needed to know it.
  if (ASCII_ONLY.test(text) && !text.replace(NOT_LETTERS, "").toLowerCase().includes(MARKER_WORD))
    return text;
  const letters: string[] = [];
  const start: number[] = [];
  const end: number[] = [];
  let offset = 0;
  for (const ch of text) {
    for (const l of fold(ch)) {
      letters.push(l);
      start.push(offset);
      end.push(offset + ch.length);
    }
    offset += ch.length;
  }
  const folded = letters.join("");
  const spans: [number, number][] = [];
  let from = 0;
  for (;;) {
    const at = folded.indexOf(MARKER_WORD, from);
    if (at < 0) break;
    spans.push([start[at]!, end[at + MARKER_WORD.length - 1]!]);
    from = at + MARKER_WORD.length;
  }
  if (spans.length === 0) return text;
  let out = "";
  let last = 0;
  for (const [a, b] of spans) {
    out += text.slice(last, a) + DEFUSED;
    last = b;
  }
  return out + text.slice(last);
}
