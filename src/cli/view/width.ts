/**
 * How many terminal columns text takes (docs/keyboard.md "The live view"): what the screen needs
 * to wrap lines at words and cut its status lines so they never wrap. The text has already been
 * neutralised (src/core/terminal-text.ts), so the only escape sequences in it are the view's own
 * colours (CSI … m), which take no column.
 *
 * A character takes two columns when it is East Asian wide or fullwidth, or an emoji drawn as a
 * picture (the East Asian Width annex, UAX 11, and the emoji presentation ranges; common blocks
 * only), none when it is a combining mark, one otherwise. Terminals disagree at the edges
 * (ambiguous-width letters, newer emoji); an error there makes a line a column longer or
 * shorter, never lost.
 */

/** Code point ranges drawn two columns wide, sorted. */
const WIDE: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f],
  [0x231a, 0x231b],
  [0x2329, 0x232a],
  [0x23e9, 0x23ec],
  [0x23f0, 0x23f0],
  [0x23f3, 0x23f3],
  [0x25fd, 0x25fe],
  [0x2614, 0x2615],
  [0x2648, 0x2653],
  [0x267f, 0x267f],
  [0x2693, 0x2693],
  [0x26a1, 0x26a1],
  [0x26aa, 0x26ab],
  [0x26bd, 0x26be],
  [0x26c4, 0x26c5],
  [0x26ce, 0x26ce],
  [0x26d4, 0x26d4],
  [0x26ea, 0x26ea],
  [0x26f2, 0x26f3],
  [0x26f5, 0x26f5],
  [0x26fa, 0x26fa],
  [0x26fd, 0x26fd],
  [0x2705, 0x2705],
  [0x270a, 0x270b],
  [0x2728, 0x2728],
  [0x274c, 0x274c],
  [0x274e, 0x274e],
  [0x2753, 0x2755],
  [0x2757, 0x2757],
  [0x2795, 0x2797],
  [0x27b0, 0x27b0],
  [0x27bf, 0x27bf],
  [0x2b1b, 0x2b1c],
  [0x2b50, 0x2b50],
  [0x2b55, 0x2b55],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x16fe0, 0x16fe4],
  [0x17000, 0x18aff],
  [0x1b000, 0x1b2ff],
  [0x1f004, 0x1f004],
  [0x1f0cf, 0x1f0cf],
  [0x1f18e, 0x1f18e],
  [0x1f191, 0x1f19a],
  [0x1f200, 0x1f251],
  [0x1f300, 0x1f320],
  [0x1f32d, 0x1f335],
  [0x1f337, 0x1f37c],
  [0x1f37e, 0x1f393],
  [0x1f3a0, 0x1f3ca],
  [0x1f3cf, 0x1f3d3],
  [0x1f3e0, 0x1f3f0],
  [0x1f3f4, 0x1f3f4],
  [0x1f3f8, 0x1f43e],
  [0x1f440, 0x1f440],
  [0x1f442, 0x1f4fc],
  [0x1f4ff, 0x1f53d],
  [0x1f54b, 0x1f54e],
  [0x1f550, 0x1f567],
  [0x1f57a, 0x1f57a],
  [0x1f595, 0x1f596],
  [0x1f5a4, 0x1f5a4],
  [0x1f5fb, 0x1f64f],
  [0x1f680, 0x1f6c5],
  [0x1f6cc, 0x1f6cc],
  [0x1f6d0, 0x1f6d2],
  [0x1f6d5, 0x1f6d7],
  [0x1f6eb, 0x1f6ec],
  [0x1f6f4, 0x1f6fc],
  [0x1f7e0, 0x1f7eb],
  [0x1f90c, 0x1f93a],
  [0x1f93c, 0x1f945],
  [0x1f947, 0x1f9ff],
  [0x1fa70, 0x1faff],
  [0x20000, 0x2fffd],
  [0x30000, 0x3fffd],
];

const COMBINING = /[\p{Mn}\p{Me}]/u;
/** An escape sequence the view itself writes (SGR colours); it takes no column. */
const CSI = /^\x1b\[[0-9;?]*[ -/]*[@-~]/;

function isWide(code: number): boolean {
  let lo = 0;
  let hi = WIDE.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [from, to] = WIDE[mid]!;
    if (code < from) hi = mid - 1;
    else if (code > to) lo = mid + 1;
    else return true;
  }
  return false;
}

/** Columns one character (a code point) takes. */
export function charWidth(c: string): number {
  const code = c.codePointAt(0) ?? 0;
  if (code < 0x300) return code < 0x20 ? 0 : 1;
  if (COMBINING.test(c)) return 0;
  return isWide(code) ? 2 : 1;
}

/** The escape sequence at the start of `text`, if there is one. */
export function escapeAt(text: string, at: number): string | undefined {
  if (text.charCodeAt(at) !== 0x1b) return undefined;
  return CSI.exec(text.slice(at, at + 32))?.[0];
}

/** Columns `text` takes on one line (escape sequences and control characters take none). */
export function textWidth(text: string): number {
  let w = 0;
  for (let i = 0; i < text.length; ) {
    const esc = escapeAt(text, i);
    if (esc) {
      i += esc.length;
      continue;
    }
    const c = String.fromCodePoint(text.codePointAt(i)!);
    w += charWidth(c);
    i += c.length;
  }
  return w;
}

/**
 * `text` cut to at most `width` columns, ending in `…` when it was cut. Escape sequences after the
 * cut are kept, so a colour opened before it is still closed.
 */
export function cutToWidth(text: string, width: number): string {
  if (textWidth(text) <= width) return text;
  const room = Math.max(0, width - 1);
  let out = "";
  let w = 0;
  let cut = false;
  for (let i = 0; i < text.length; ) {
    const esc = escapeAt(text, i);
    if (esc) {
      out += esc;
      i += esc.length;
      continue;
    }
    const c = String.fromCodePoint(text.codePointAt(i)!);
    i += c.length;
    if (cut) continue;
    const cw = charWidth(c);
    if (w + cw > room) {
      out += "…";
      cut = true;
      continue;
    }
    out += c;
    w += cw;
  }
  return out;
}
