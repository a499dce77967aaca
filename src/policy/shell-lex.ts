/**
 * A small POSIX-shell lexer for the guarded-mode tripwire.
 *
 * It is not a shell: it only needs to see the words a shell would see, so that quoting
 * (`r"m"`, `\rm`, `$'\x72m'`), separators (`;`, `&&`, `||`, `|`, newlines), groups,
 * substitutions (`$(...)`, backticks, `<(...)`), redirections and here-documents cannot hide
 * a catastrophic command. Every substitution's text is handed back so the caller checks it
 * as a command of its own. Input a real shell would reject (unterminated quotes or
 * substitutions) is reported as an error: the gate then fails closed, which costs ordinary
 * work nothing because such a command would never run anyway.
 */

/** How deeply quotes and substitutions may nest inside one another before we stop looking. */
export const MAX_LEX_NESTING = 32;

export interface Word {
  /** The word after quote removal, as the shell would pass it (expansions left as written). */
  text: string;
  /** Source text of every `$(...)`, backtick, `${...}` and `<(...)`/`>(...)` inside the word. */
  subs: string[];
  /** True when any part of the word was quoted or escaped (matters for here-doc delimiters). */
  quoted: boolean;
}

export interface Redirect {
  /** `>`, `>>`, `>|`, `&>`, `&>>`, `>&`, `<`, `<<`, `<<-`, `<<<`, `<>`, `<&`. */
  op: string;
  target?: Word;
  /** Here-document body; `expands` is false when the delimiter was quoted. */
  heredoc?: { body: string; expands: boolean };
}

export type Token =
  | { kind: "word"; word: Word }
  | { kind: "op"; op: string }
  | { kind: "redir"; redir: Redirect };

export interface SimpleCommand {
  words: Word[];
  redirs: Redirect[];
  /** The command's stdin is the previous pipeline stage (`a | b`: b is piped). */
  pipedIn: boolean;
}

export type LexResult = { ok: true; tokens: Token[] } | { ok: false; error: string };

const UNBALANCED = "unbalanced quotes or substitution";
const TOO_DEEP = "quotes and substitutions nest too deeply";

/** Characters that end an unquoted word. */
const WORD_END = new Set([" ", "\t", "\r", "\n", ";", "&", "|", "(", ")", "<", ">"]);
const REDIR_RE = /(\d*)(&>>|&>|>>|>\||>&|>|<<<|<<-|<<|<>|<&|<)/y;
const OP_RE = /(;;&|;;|;&|&&|\|\||\|&|\||&|;|\(|\))/y;

/** Result of a scan helper: index just past the construct, or a negative error code. */
const ERR_UNBALANCED = -1;
const ERR_DEEP = -2;

function scanError(code: number): string {
  return code === ERR_DEEP ? TOO_DEEP : UNBALANCED;
}

/**
 * Index of the `close` that balances an already-consumed `open`, honouring quotes,
 * escapes and backticks inside. Used for `$(`, `${`, `<(`.
 */
function skipBalanced(src: string, i: number, open: string, close: string, depth: number): number {
  if (depth > MAX_LEX_NESTING) return ERR_DEEP;
  let level = 1;
  while (i < src.length) {
    const c = src[i];
    if (c === "\\") {
      i += 2;
      continue;
    }
    if (c === "'") {
      const j = src.indexOf("'", i + 1);
      if (j < 0) return ERR_UNBALANCED;
      i = j + 1;
      continue;
    }
    if (c === '"') {
      const j = skipDouble(src, i + 1, depth + 1);
      if (j < 0) return j;
      i = j;
      continue;
    }
    if (c === "`") {
      const j = findBacktickEnd(src, i + 1);
      if (j < 0) return j;
      i = j + 1;
      continue;
    }
    if (c === open) level++;
    else if (c === close && --level === 0) return i;
    i++;
  }
  return ERR_UNBALANCED;
}

/** Index just past the closing `"` of a double-quoted string whose opening quote is consumed. */
function skipDouble(src: string, i: number, depth: number): number {
  if (depth > MAX_LEX_NESTING) return ERR_DEEP;
  while (i < src.length) {
    const c = src[i];
    if (c === "\\") {
      i += 2;
      continue;
    }
    if (c === '"') return i + 1;
    if (c === "$" && (src[i + 1] === "(" || src[i + 1] === "{")) {
      const close = src[i + 1] === "(" ? ")" : "}";
      const j = skipBalanced(src, i + 2, src[i + 1]!, close, depth + 1);
      if (j < 0) return j;
      i = j + 1;
      continue;
    }
    if (c === "`") {
      const j = findBacktickEnd(src, i + 1);
      if (j < 0) return j;
      i = j + 1;
      continue;
    }
    i++;
  }
  return ERR_UNBALANCED;
}

/** Index of the closing backtick (escaped backticks inside do not count). */
function findBacktickEnd(src: string, i: number): number {
  while (i < src.length) {
    const c = src[i];
    if (c === "\\") {
      i += 2;
      continue;
    }
    if (c === "`") return i;
    i++;
  }
  return ERR_UNBALANCED;
}

/** Inside backticks, `\\`, `` \` `` and `\$` lose their backslash before the text runs. */
function unescapeBackticks(s: string): string {
  return s.replace(/\\([\\`$])/g, "$1");
}

/** Decodes bash's `$'...'` escapes; the caller lower-cases the result. */
function decodeAnsiC(s: string): string {
  return s.replace(
    /\\(x[0-9a-f]{1,2}|u[0-9a-f]{1,4}|U[0-9a-f]{1,8}|[0-7]{1,3}|c.|.)/gis,
    (_m, e: string): string => {
      const head = e[0]!;
      if (/^[0-7]/.test(e)) return String.fromCodePoint(Number.parseInt(e, 8));
      if ((head === "x" || head === "u" || head === "U") && e.length > 1) {
        const cp = Number.parseInt(e.slice(1), 16);
        return cp <= 0x10ffff ? String.fromCodePoint(cp) : "";
      }
      if (head === "c" && e.length === 2) return String.fromCharCode(e.charCodeAt(1) & 0x1f);
      const simple: Record<string, string> = {
        a: "\x07",
        b: "\b",
        e: "\x1b",
        E: "\x1b",
        f: "\f",
        n: "\n",
        r: "\r",
        t: "\t",
        v: "\v",
      };
      return simple[head] ?? head;
    },
  );
}

/** Index of the closing `'` of `$'...'` (backslash escapes a quote there). */
function findAnsiCEnd(src: string, i: number): number {
  while (i < src.length) {
    if (src[i] === "\\") {
      i += 2;
      continue;
    }
    if (src[i] === "'") return i;
    i++;
  }
  return ERR_UNBALANCED;
}

/**
 * Finds the substitutions in text that the shell expands but does not split into commands:
 * an unquoted here-document body, or the inside of `${...}`. Quotes are literal there.
 */
export function scanSubstitutions(
  text: string,
  depth = 0,
): { ok: true; subs: string[] } | { ok: false; error: string } {
  if (depth > MAX_LEX_NESTING) return { ok: false, error: TOO_DEEP };
  const subs: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "\\") {
      i += 2;
      continue;
    }
    if (c === "$" && (text[i + 1] === "(" || text[i + 1] === "{")) {
      const open = text[i + 1]!;
      const j = skipBalanced(text, i + 2, open, open === "(" ? ")" : "}", depth + 1);
      if (j < 0) return { ok: false, error: scanError(j) };
      const inner = text.slice(i + 2, j);
      if (open === "(") subs.push(inner);
      else {
        // ${...} runs nothing itself; only what it contains (`${x:-$(cmd)}`) does.
        const found = scanSubstitutions(inner, depth + 1);
        if (!found.ok) return found;
        subs.push(...found.subs);
      }
      i = j + 1;
      continue;
    }
    if (c === "`") {
      const j = findBacktickEnd(text, i + 1);
      if (j < 0) return { ok: false, error: UNBALANCED };
      subs.push(unescapeBackticks(text.slice(i + 1, j)));
      i = j + 1;
      continue;
    }
    i++;
  }
  return { ok: true, subs };
}

/**
 * Splits already lower-cased shell source into words, operators and redirections.
 * Here-document bodies are attached to their redirection, not lexed as commands.
 */
export function lex(src: string): LexResult {
  const tokens: Token[] = [];
  const pending: { redir: Redirect; delim: string; stripTabs: boolean; expands: boolean }[] = [];
  const n = src.length;
  let i = 0;

  /** Reads one word starting at i; returns the word and the index after it. */
  const readWord = (): { ok: true; word: Word; end: number } | { ok: false; error: string } => {
    let text = "";
    const subs: string[] = [];
    let quoted = false;
    while (i < n) {
      const c = src[i]!;
      if (WORD_END.has(c)) break;
      if (c === "\\") {
        if (src[i + 1] === "\n") {
          i += 2; // line continuation: the shell deletes both characters
          continue;
        }
        quoted = true;
        if (i + 1 < n) text += src[i + 1];
        i += 2;
        continue;
      }
      if (c === "'") {
        const j = src.indexOf("'", i + 1);
        if (j < 0) return { ok: false, error: UNBALANCED };
        text += src.slice(i + 1, j);
        quoted = true;
        i = j + 1;
        continue;
      }
      if (c === "$" && src[i + 1] === "'") {
        const j = findAnsiCEnd(src, i + 2);
        if (j < 0) return { ok: false, error: UNBALANCED };
        text += decodeAnsiC(src.slice(i + 2, j)).toLowerCase();
        quoted = true;
        i = j + 1;
        continue;
      }
      if (c === '"' || (c === "$" && src[i + 1] === '"')) {
        if (c === "$") i++; // $"..." is a translatable string: same as "..."
        quoted = true;
        i++;
        let closed = false;
        while (i < n) {
          const d = src[i]!;
          if (d === '"') {
            i++;
            closed = true;
            break;
          }
          if (d === "\\") {
            const e = src[i + 1];
            if (e === "\n") {
              i += 2;
              continue;
            }
            if (e === "$" || e === "`" || e === '"' || e === "\\") {
              text += e;
              i += 2;
              continue;
            }
            text += d;
            i++;
            continue;
          }
          const r = readExpansion();
          if (r === null) {
            text += d;
            i++;
            continue;
          }
          if (!r.ok) return r;
          text += r.text;
        }
        if (!closed) return { ok: false, error: UNBALANCED };
        continue;
      }
      const r = readExpansion();
      if (r === null) {
        text += c;
        i++;
        continue;
      }
      if (!r.ok) return r;
      text += r.text;
    }
    return { ok: true, word: { text, subs, quoted }, end: i };

    /** `$(...)`, `${...}` or a backtick at i: records the sub and returns its literal text. */
    function readExpansion(): { ok: true; text: string } | { ok: false; error: string } | null {
      const c = src[i];
      if (c === "$" && (src[i + 1] === "(" || src[i + 1] === "{")) {
        const open = src[i + 1]!;
        const close = open === "(" ? ")" : "}";
        const j = skipBalanced(src, i + 2, open, close, 1);
        if (j < 0) return { ok: false, error: scanError(j) };
        const inner = src.slice(i + 2, j);
        if (open === "(") subs.push(inner);
        else {
          // ${...} runs nothing itself, but `${x:-$(cmd)}` does: collect what it contains.
          const found = scanSubstitutions(inner);
          if (!found.ok) return found;
          subs.push(...found.subs);
        }
        i = j + 1;
        return { ok: true, text: `$${open}${inner}${close}` };
      }
      if (c === "`") {
        const j = findBacktickEnd(src, i + 1);
        if (j < 0) return { ok: false, error: UNBALANCED };
        const inner = unescapeBackticks(src.slice(i + 1, j));
        subs.push(inner);
        i = j + 1;
        return { ok: true, text: `\`${inner}\`` };
      }
      return null;
    }
  };

  /** After a newline: consume the bodies of here-documents opened on that line. */
  const readHeredocBodies = (): void => {
    for (const h of pending) {
      const lines: string[] = [];
      while (i < n) {
        const nl = src.indexOf("\n", i);
        const line = nl < 0 ? src.slice(i) : src.slice(i, nl);
        i = nl < 0 ? n : nl + 1;
        const cmp = h.stripTabs ? line.replace(/^\t+/, "") : line;
        if (cmp.replace(/\r$/, "") === h.delim) break;
        lines.push(line);
      }
      h.redir.heredoc = { body: lines.join("\n"), expands: h.expands };
    }
    pending.length = 0;
  };

  while (i < n) {
    const c = src[i]!;
    if (c === " " || c === "\t" || c === "\r") {
      i++;
      continue;
    }
    if (c === "\\" && src[i + 1] === "\n") {
      i += 2;
      continue;
    }
    if (c === "\n") {
      tokens.push({ kind: "op", op: "\n" });
      i++;
      if (pending.length > 0) readHeredocBodies();
      continue;
    }
    if (c === "#") {
      // A comment runs to the end of the line; the newline itself still separates commands.
      const nl = src.indexOf("\n", i);
      i = nl < 0 ? n : nl;
      continue;
    }
    if ((c === "<" || c === ">") && src[i + 1] === "(") {
      const j = skipBalanced(src, i + 2, "(", ")", 1);
      if (j < 0) return { ok: false, error: scanError(j) };
      const inner = src.slice(i + 2, j);
      tokens.push({ kind: "word", word: { text: `${c}(${inner})`, subs: [inner], quoted: false } });
      i = j + 1;
      continue;
    }
    REDIR_RE.lastIndex = i;
    const rm = REDIR_RE.exec(src);
    if (rm) {
      const op = rm[2]!;
      i += rm[0].length;
      while (src[i] === " " || src[i] === "\t") i++;
      const redir: Redirect = { op };
      const nextIsWord = i < n && !WORD_END.has(src[i]!);
      const procSub = (src[i] === "<" || src[i] === ">") && src[i + 1] === "(";
      if (procSub) {
        const j = skipBalanced(src, i + 2, "(", ")", 1);
        if (j < 0) return { ok: false, error: scanError(j) };
        const inner = src.slice(i + 2, j);
        redir.target = { text: `${src[i]}(${inner})`, subs: [inner], quoted: false };
        i = j + 1;
      } else if (nextIsWord) {
        const w = readWord();
        if (!w.ok) return w;
        redir.target = w.word;
        i = w.end;
      }
      if ((op === "<<" || op === "<<-") && redir.target) {
        pending.push({
          redir,
          delim: redir.target.text,
          stripTabs: op === "<<-",
          expands: !redir.target.quoted,
        });
      }
      tokens.push({ kind: "redir", redir });
      continue;
    }
    OP_RE.lastIndex = i;
    const om = OP_RE.exec(src);
    if (om) {
      tokens.push({ kind: "op", op: om[1]! });
      i += om[0].length;
      continue;
    }
    const w = readWord();
    if (!w.ok) return w;
    i = w.end;
    tokens.push({ kind: "word", word: w.word });
  }
  // A here-document with no newline after its operator has an empty body (bash warns and runs).
  for (const h of pending) h.redir.heredoc = { body: "", expands: h.expands };
  return { ok: true, tokens };
}

/** Groups tokens into simple commands, remembering which ones read a pipe. */
export function simpleCommands(tokens: Token[]): SimpleCommand[] {
  const out: SimpleCommand[] = [];
  let piped = false;
  let cur: SimpleCommand = { words: [], redirs: [], pipedIn: false };
  const flush = (): void => {
    if (cur.words.length > 0 || cur.redirs.length > 0) out.push(cur);
    cur = { words: [], redirs: [], pipedIn: piped };
  };
  for (const t of tokens) {
    if (t.kind === "word") cur.words.push(t.word);
    else if (t.kind === "redir") cur.redirs.push(t.redir);
    else {
      flush();
      // `a | (b)`: the subshell still reads the pipe, so `(` keeps the flag.
      if (t.op === "|" || t.op === "|&") piped = true;
      else if (t.op !== "(") piped = false;
      cur.pipedIn = piped;
    }
  }
  flush();
  return out;
}
