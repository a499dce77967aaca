/**
 * A table of histories for the compaction tests. compact-expected.json holds what
 * the quadratic implementation that issue 16 replaced returned for each case (generated with
 * it, bundled by esbuild, before the rewrite: commit "bench/scale: …"), so these cases pin
 * "behaviour unchanged". Changed on purpose since (issue 47, a resumed session's goal is never
 * compacted away): the error lines, which now name each part and their sum, and the "just over"
 * cases of a later goal, which keep the newest messages before that goal when they fit instead
 * of summarising everything before it.
 */
import type { Message } from "../../src/store/session.js";
import { stepText } from "../helpers/scripted-server.js";

export interface CompactCase {
  name: string;
  messages: Message[];
  pinned: number[];
  budget: number;
  style: "extractive" | "drop";
}

/** Deterministic pseudo-random numbers (xorshift32), so every case is the same on every run. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

const step = (thought: string, action: string, input: unknown) => stepText(action, input, thought);

/** One assistant step and its observation, chosen by `r`, covering every branch of the digest. */
function turn(i: number, r: number): Message[] {
  const path = `src/mod${r % 17}/file${i}.ts`;
  switch (r % 11) {
    case 0:
      return [
        { role: "assistant", content: step(`read ${path} to see the parser`, "file_read", { path }) },
        { role: "user", content: `Observation:\n${"const a = 1;\n".repeat((r % 40) + 1)}` },
      ];
    case 1:
      return [
        { role: "assistant", content: step("search for the error", "grep", { pattern: "TODO", path }) },
        { role: "user", content: `Observation:\n12:// TODO ${r}\n40:// TODO later` },
      ];
    case 2:
      return [
        { role: "assistant", content: step(`run the tests (attempt ${i})`, "bash", `npm test -- ${i}`) },
        { role: "user", content: `Observation:\nexit code: ${r % 3}\nstdout: ok ${"x".repeat(r % 300)}` },
      ];
    case 3:
      return [
        { role: "assistant", content: step("try the network", "bash", "curl http://169.254.169.254/") },
        { role: "user", content: "Observation:\ndenied by policy (guarded): internal address" },
      ];
    case 4:
      return [
        { role: "assistant", content: step(`fix ${path}`, "file_edit", { path, old: "a", new: "b" }) },
        { role: "user", content: "Observation:\nedited 1 place" },
      ];
    case 5:
      return [
        {
          role: "assistant",
          content: step("write the notes", "file_write", { path: `notes/${i}.md`, content: "x" }),
        },
        { role: "user", content: "Observation:\nerror: cannot write notes\nENOSPC: no space left\nmore" },
      ];
    case 6:
      return [
        // Prose and a code fence around the step, as models send.
        {
          role: "assistant",
          content: `Sure.\n\`\`\`json\n${step("outline it", "outline", { path })}\n\`\`\``,
        },
        { role: "user", content: "Observation:\nfunction a() {}\nfunction b() {}" },
      ];
    case 7:
      return [
        { role: "assistant", content: "I think I should look again, no JSON here" },
        { role: "user", content: "Your reply contains no JSON object; error: reply with one step" },
      ];
    case 8:
      return [
        {
          role: "assistant",
          content: step(
            `ünïcödé thought ${"ψ".repeat(r % 200)} with   lots\n\nof   space`,
            "bash",
            "sleep 100",
          ),
        },
        { role: "user", content: "Observation:\ntimed out after 30000 ms" },
      ];
    case 9:
      return [
        { role: "assistant", content: step("", "glob", { pattern: "**/*.ts" }) },
        {
          role: "user",
          content: `Observation:\n${Array.from({ length: (r % 30) + 1 }, (_, k) => `f${k}.ts`).join("\n")}`,
        },
      ];
    default:
      return [
        { role: "assistant", content: step("kill it", "bash", "yes > /dev/null") },
        { role: "user", content: "Observation:\nkilled by signal SIGKILL" },
      ];
  }
}

function history(
  seed: number,
  turns: number,
  opts: { priorSummary?: boolean; laterGoal?: boolean } = {},
): {
  messages: Message[];
  pinned: number[];
} {
  const next = rng(seed);
  const messages: Message[] = [{ role: "system", content: `You are Scoot. ${"rules ".repeat(50)}` }];
  let goal = 1;
  if (opts.laterGoal) {
    // A REPL session: an earlier goal and its turns sit between the system prompt and this goal.
    messages.push({ role: "user", content: "an earlier goal" });
    for (let i = 0; i < 4; i++) messages.push(...turn(1000 + i, next()));
    messages.push({ role: "assistant", content: step("done", "final", "earlier answer") });
    goal = messages.length;
  }
  messages.push({ role: "user", content: `goal for seed ${seed}: tidy the repository` });
  if (opts.priorSummary) {
    messages.push({
      role: "user",
      content: `[Compacted history] 40 earlier messages were summarised; use the recall action to read any of them exactly.\nFiles read: a.ts; b.ts\nNotes: ${"an older finding ".repeat(20)}`,
    });
  }
  for (let i = 0; i < turns; i++) messages.push(...turn(i, next()));
  return { messages, pinned: [0, goal] };
}

function bytes(messages: readonly Message[]): number {
  let n = 0;
  for (const m of messages) n += Buffer.byteLength(m.content) + 32;
  return n;
}

export function compactCases(): CompactCase[] {
  const cases: CompactCase[] = [];
  const shapes: [string, number, { priorSummary?: boolean; laterGoal?: boolean }][] = [
    ["short", 6, {}],
    ["medium", 40, {}],
    ["long", 150, {}],
    ["prior summary", 60, { priorSummary: true }],
    ["later goal (REPL)", 30, { laterGoal: true }],
    ["later goal and prior summary", 80, { laterGoal: true, priorSummary: true }],
  ];
  let seed = 7;
  for (const [name, turns, opts] of shapes) {
    for (const style of ["extractive", "drop"] as const) {
      seed += 1;
      const h = history(seed, turns, opts);
      const total = bytes(h.messages);
      // Under budget, just over, half, a tenth, and too small even for the minimum.
      for (const [label, budget] of [
        ["fits", total],
        ["just over", total - 1],
        ["half", Math.floor(total / 2)],
        ["tenth", Math.floor(total / 10)],
        ["too small", 600],
      ] as const) {
        cases.push({
          name: `${name}, ${style}, ${label}`,
          messages: h.messages,
          pinned: h.pinned,
          budget,
          style,
        });
      }
    }
  }
  return cases;
}
