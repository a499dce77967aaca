/**
 * What is really wrong with a JSON text a model sent, in the words a correction uses: the
 * parser's own first complaint with its line and column, and "cut off" only when the parser ran
 * past the end of the text (an object that really never closes). A duplicated key is a defect
 * too: `JSON.parse` keeps the last value while a reader of the text sees the first, so a reply
 * holding one is corrected, never run (docs/context.md "Words are not calls").
 */

import { lineColumn } from "./json-braces.js";

/** Characters shown either side of the position a JSON parser complained about. */
export const EXCERPT_RADIUS_CHARS = 24;

export interface JsonDefect {
  /** The parser ran past the end: the text was cut off (or never closes). */
  cutOff: boolean;
  /** The parser's complaint without its position, e.g. "Expected ',' or '}' after property value". */
  what: string;
  /** 0-based offset of the complaint in the text. */
  at: number;
  /** `line 1, column 20`. */
  where: string;
  /** The text around the offset, on one line. */
  excerpt: string;
}

/** `…text around the position…` on one line. */
export function around(text: string, at: number): string {
  const from = Math.max(0, at - EXCERPT_RADIUS_CHARS);
  const to = Math.min(text.length, at + EXCERPT_RADIUS_CHARS);
  const piece = JSON.stringify(text.slice(from, to)).slice(1, -1);
  return `${from > 0 ? "…" : ""}${piece}${to < text.length ? "…" : ""}`;
}

/** The first defect `JSON.parse` finds in `text`, or undefined when it parses. */
export function jsonDefect(text: string): JsonDefect | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (e) {
    const message = (e as Error).message.replace(/\s*\(line \d+ column \d+\)/, "");
    const pos = /position (\d+)/.exec(message);
    const end = text.trimEnd().length;
    // Node 20's parser names some defects without a position ("Unexpected token 'f', … is not
    // valid JSON"): the first defect is then found by the grammar walk below.
    const at = pos ? Number(pos[1]) : firstErrorAt(text);
    const what = message
      .replace(/ in JSON at position \d+/, "")
      .replace(/^Unexpected end of JSON input$/, "it ends early")
      .replace(/^(Unexpected token '.'), .* is not valid JSON$/s, "$1");
    // Past the last character that is not white space: nothing the model sent was wrong yet.
    const cutOff = at >= end;
    return {
      cutOff,
      what,
      at,
      where: lineColumn(text, Math.min(at, text.length)),
      excerpt: around(text, at),
    };
  }
}

/**
 * Offset of the first character at which `text` stops being JSON (its length when it ends too
 * early): a walk of the grammar, for the parser messages that carry no position.
 */
export function firstErrorAt(text: string): number {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const str = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail();
      if (text[i] === "\\") {
        i++;
        if (text[i] === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail();
          i += 4;
        } else if (i >= text.length || !'"\\/bfnrt'.includes(text[i]!)) fail();
      }
      i++;
    }
    if (i >= text.length) fail();
    i++;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        str();
        ws();
        if (text[i] !== ":") fail();
        i++;
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "}") {
          i++;
          return;
        } else fail();
      }
    }
    if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "]") {
          i++;
          return;
        } else fail();
      }
    }
    if (c === '"') {
      str();
      return;
    }
    const word = c === "t" ? "true" : c === "f" ? "false" : c === "n" ? "null" : undefined;
    if (word) {
      // As the parser does: the first letter that leaves the word is the defect.
      for (const ch of word) {
        if (text[i] !== ch) fail();
        i++;
      }
      return;
    }
    const num = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    num.lastIndex = i;
    const m = num.exec(text);
    if (!m) fail();
    i += (m as RegExpExecArray)[0].length;
  };
  try {
    value();
    ws();
    return Math.min(i, text.length);
  } catch (at) {
    return Math.min(at as number, text.length);
  }
}
