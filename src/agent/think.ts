/**
 * Reasoning models write their thinking into the reply itself: a leading `<think>…</think>`
 * (or `<thinking>…</thinking>`) block, or — when the server's chat template already opened
 * the block — everything up to an orphan `</think>`. That text is set aside before the step
 * is extracted (docs/context.md "Reasoning models"): a draft step inside the thinking is never run.
 *
 * Tags count only outside JSON strings, so a step whose thought mentions "</think>" keeps it.
 */
import type { NativeCall } from "../backend/tool-calls.js";
import { walkBraces } from "../core/json-braces.js";

export interface SplitThinking {
  /** The thinking set aside (tags removed), "" when there was none. */
  thinking: string;
  /** What remains to hold the step. */
  rest: string;
  /** How the thinking was recognised, for the trace. */
  kind: "none" | "closed" | "orphan" | "unclosed";
}

/** `<think>`, `<thinking>`, and Gemma 4's thought channel `<|channel>thought … <channel|>`. */
const OPEN_TAG = /^(?:<(think|thinking)>|<\|channel>thought\b)/i;
const CLOSE_TAG = /^(?:<\/(think|thinking)>|<channel\|>)/i;
const CLOSE_ANYWHERE = /<\/think(ing)?>|<channel\|>/i;

/**
 * Index and length of the first closing tag at or after `from` that is not inside a JSON
 * string (strings are tracked only inside braces: prose quotes do not open one).
 */
function findClose(text: string, from: number): { at: number; length: number } | undefined {
  // Most replies have no closing tag at all: no walk for them.
  if (!CLOSE_ANYWHERE.test(text)) return undefined;
  let found: { at: number; length: number } | undefined;
  walkBraces(text, from, (i, event) => {
    if (event !== "other" || text[i] !== "<") return false;
    const m = CLOSE_TAG.exec(text.slice(i, i + 12));
    if (m) found = { at: i, length: m[0].length };
    return found !== undefined;
  });
  return found;
}

export function splitThinking(text: string): SplitThinking {
  const lead = text.length - text.trimStart().length;
  const open = OPEN_TAG.exec(text.slice(lead));
  if (open) {
    const start = lead + open[0].length;
    const close = findClose(text, start);
    if (!close) return { thinking: text.slice(start).trim(), rest: "", kind: "unclosed" };
    return {
      thinking: text.slice(start, close.at).trim(),
      rest: text.slice(close.at + close.length),
      kind: "closed",
    };
  }
  const close = findClose(text, 0);
  if (!close) return { thinking: "", rest: text, kind: "none" };
  return {
    thinking: text.slice(0, close.at).trim(),
    rest: text.slice(close.at + close.length),
    kind: "orphan",
  };
}

/*
 * gpt-oss replies in the Harmony format when the server does not parse it (llama.cpp without its
 * parser, proxies): channels marked with special tokens, e.g.
 *
 *   <|channel|>analysis<|message|>…thinking…<|end|><|start|>assistant<|channel|>final<|message|>{…step…}<|return|>
 *   <|start|>assistant<|channel|>commentary to=functions.bash <|constrain|>json<|message|>{"command": "ls"}<|call|>
 *
 * Only the final channel is the reply. The analysis channel is reasoning: shown and audited as
 * thinking, kept out of the history (the official template refuses `<|channel|>` in content, and
 * a draft step there must never count as a second object). A commentary message addressed
 * `to=functions.<tool>` is a tool call, read as the step it means. No special token is ever
 * sent back to the model.
 */
export interface HarmonyReply {
  /** What stands as the reply: the final channel ("" when the reply is a call). */
  text: string;
  /** The commentary call addressed `to=functions.<tool>`, when there is no final channel. */
  call?: NativeCall;
  /** The analysis (and addressed-to-nobody commentary) text, as thinking. */
  reasoning: string;
  notes: string[];
}

/** The token every Harmony reply has: replies without it are not read here at all. */
export const HARMONY_MARK = "<|channel|>";

/** A Harmony special token. */
const SPECIAL = /<\|(?:start|end|message|channel|constrain|return|call)\|>/g;
/** One message: an optional `<|start|>role …` header, the channel header, then its body. */
const MESSAGE =
  /(?:<\|start\|>([^<]*))?<\|channel\|>([^<]*?)(?:<\|constrain\|>[^<]*)?<\|message\|>([\s\S]*?)(?=<\|end\|>|<\|return\|>|<\|call\|>|<\|start\|>|<\|channel\|>|$)/g;
/** Where a message is addressed, in the start or the channel header: `to=functions.bash`. */
const RECIPIENT = /\bto=(?:functions\.)?([A-Za-z_][\w-]*)/;

/**
 * Whether the reply is in the Harmony format: it *begins* with a channel or a message start. A
 * reply that only quotes Harmony markup later (an answer explaining the format) is not read as it,
 * so a commentary call quoted in prose never runs (docs/context.md "Words are not calls").
 */
export function isHarmony(text: string): boolean {
  const lead = text.trimStart();
  return (lead.startsWith(HARMONY_MARK) || lead.startsWith("<|start|>")) && text.includes("<|message|>");
}

/** The reply read as Harmony, or undefined when it does not begin as a Harmony reply. */
export function readHarmony(text: string): HarmonyReply | undefined {
  if (!isHarmony(text)) return undefined;
  const thinking: string[] = [];
  let final: string | undefined;
  let call: { name: string; arguments: string } | undefined;
  for (const m of text.matchAll(MESSAGE)) {
    const header = `${m[1] ?? ""} ${m[2] ?? ""}`;
    const channel = (m[2] ?? "").trim().split(/\s+/)[0] ?? "";
    const body = (m[3] ?? "").replace(SPECIAL, "").trim();
    const to = RECIPIENT.exec(header)?.[1];
    if (channel === "final") final = body;
    else if (to !== undefined && call === undefined) call = { name: to, arguments: body };
    else if (body !== "") thinking.push(body);
  }
  const notes = ["read the reply's Harmony channels: the analysis set aside as thinking"];
  const reply = final ?? "";
  const asCall = final === undefined && call !== undefined;
  return {
    text: reply.replace(SPECIAL, ""),
    ...(asCall ? { call } : {}),
    reasoning: thinking.join("\n"),
    notes,
  };
}

const FINAL_CHANNEL = "<|channel|>final<|message|>";

/**
 * A streamed reply on its way to the follower that shows the step as it arrives: Harmony's
 * channels are held back until the final one opens, so a draft step in the analysis is never
 * shown as the step (the analysis is shown as thinking once the reply is read). Any other reply
 * passes through as it comes.
 */
export function harmonyGate(forward: (text: string) => void): (text: string) => void {
  let held = "";
  let mode: "deciding" | "harmony" | "final" | "plain" = "deciding";
  return (text) => {
    if (mode === "plain" || mode === "final") return forward(text);
    held += text;
    if (mode === "deciding") {
      const lead = held.trimStart();
      // Too little to tell yet: white space only, or a lone "<".
      if (lead === "" || lead === "<") return;
      if (!lead.startsWith("<|")) return flushPlain();
      mode = "harmony";
    }
    const at = held.indexOf(FINAL_CHANNEL);
    if (at === -1) {
      // What comes before the final channel is never forwarded: only a tail that may begin its
      // marker is kept, so a long analysis is not searched again on every piece.
      held = held.slice(-(FINAL_CHANNEL.length - 1));
      return;
    }
    mode = "final";
    const rest = held.slice(at + FINAL_CHANNEL.length);
    held = "";
    if (rest !== "") forward(rest);
  };
  function flushPlain(): void {
    mode = "plain";
    const out = held;
    held = "";
    forward(out);
  }
}

/*
 * What carries no meaning around a reply, set aside before it is read (docs/context.md "Words are
 * not calls"): leading white space, end-of-turn tokens a server leaked, a code fence around it.
 */
/** End-of-turn tokens servers leak into the text when their template does not strip them. */
const END_TOKENS = [
  "<|im_end|>",
  "<|eot_id|>",
  "<|eom_id|>",
  "<|end|>",
  "<|endoftext|>",
  "<|end_of_text|>",
  "</s>",
  "<end_of_turn>",
  "<|return|>",
  "<|call|>",
  "<｜end▁of▁sentence｜>",
];

export interface Lead {
  /** The reply as it stands for reading: from its first meaningful character. */
  text: string;
  notes: string[];
  /** The label of a code fence around the whole reply (`json`, `tool_code`), "" for a bare fence. */
  fence?: string;
}

/** The reply body without leading white space, trailing end-of-turn tokens and a fence around it. */
export function leadOf(body: string): Lead {
  const notes: string[] = [];
  let text = body.trim();
  for (
    let token = END_TOKENS.find((t) => text.endsWith(t));
    token;
    token = END_TOKENS.find((t) => text.endsWith(t))
  ) {
    notes.push(`set aside the end-of-turn token ${token}`);
    text = text.slice(0, -token.length).trimEnd();
  }
  const fence = /^```([\w-]*)[ \t]*\n([\s\S]*?)\n?```/.exec(text);
  if (fence) {
    const after = text.slice(fence[0].length);
    return { text: fence[2]!.trim() + (after.trim() === "" ? "" : `\n${after}`), notes, fence: fence[1]! };
  }
  return { text, notes };
}
