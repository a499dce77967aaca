/**
 * Benchmark inputs shared by several benches: the peer mix (peer.mjs, before.mjs), a long
 * run's steps and a home full of transcripts (scale.mjs, before.mjs), and Scoot's environment.
 */
import fs from "node:fs";
import path from "node:path";

/**
 * The peer bench's work, `turns - 1` tool turns: [Scoot's step, pi's tool call] each, two reads
 * in three turns and a listing in the third.
 */
export function peerMix(turns) {
  return Array.from({ length: turns - 1 }, (_, i) => {
    const d = i % 5;
    const f = i % 10;
    if (i % 3 === 2)
      return [
        { action: "glob", input: { pattern: `pkg${d}/*` } },
        { name: "ls", arguments: { path: `pkg${d}` } },
      ];
    return [
      { action: "file_read", input: { path: `pkg${d}/m${f}.ts`, limit: 20 } },
      { name: "read", arguments: { path: `pkg${d}/m${f}.ts`, limit: 20 } },
    ];
  });
}

/** Scoot's replies for the peer mix: its steps, then a final answer. */
export function peerScootScript(turns) {
  return [
    ...peerMix(turns).map(([s]) =>
      JSON.stringify({ thought: "next", action: s.action, action_input: JSON.stringify(s.input) }),
    ),
    JSON.stringify({ thought: "done", action: "final", action_input: "done" }),
  ];
}

/** A child's environment for Scoot with `home`: no SCOOT_* setting of the caller's but `extra`. */
export function scootEnv(home, extra = {}) {
  const env = { ...process.env, SCOOT_HOME: home, ...extra };
  for (const k of Object.keys(env))
    if (k.startsWith("SCOOT_") && !(k in extra) && k !== "SCOOT_HOME") delete env[k];
  return env;
}

/** `turns` replies: reads, greps and globs over the bench tree in turn, then a final answer. */
export function scaleTurnScript(turns) {
  const step = (i, action, input) =>
    JSON.stringify({
      thought: `turn ${i}: looking at the next module`,
      action,
      action_input: JSON.stringify(input),
    });
  const toolSteps = Array.from({ length: turns - 1 }, (_, i) => {
    const d = i % 5;
    const f = i % 10;
    if (i % 3 === 0) return step(i, "file_read", { path: `pkg${d}/m${f}.ts`, limit: 20 });
    if (i % 3 === 1) return step(i, "grep", { pattern: "note [0-3]", path: `pkg${d}/m${f}.ts` });
    return step(i, "glob", { pattern: `pkg${d}/*.ts` });
  });
  return [...toolSteps, JSON.stringify({ thought: "done", action: "final", action_input: "done" })];
}

/**
 * `count` transcripts of `messages` messages each in `dir`, the newest first by mtime. With
 * `projects` (project roots), each session also gets the sidecar a run writes, naming the
 * projects in turn: session `s` was started in `projects[s % projects.length]`.
 */
export function writeSessions(dir, count, messages, projects = []) {
  const system = { role: "system", content: `You are Scoot. ${"Rules and tools. ".repeat(150)}` };
  const now = Date.now() / 1000;
  for (let s = 0; s < count; s++) {
    const msgs = [system, { role: "user", content: `goal number ${s}: tidy the module ${s % 50}` }];
    for (let m = 2; m < messages; m++) {
      msgs.push(
        m % 2 === 0
          ? {
              role: "assistant",
              content: JSON.stringify({
                thought: `step ${m}`,
                action: "file_read",
                action_input: `{"path":"src/m${m}.ts"}`,
              }),
            }
          : { role: "user", content: `Observation: ${"export const x = 1;\n".repeat(25)}` },
      );
    }
    const file = path.join(dir, `cli-${1_700_000_000_000 + s}-1.jsonl`);
    fs.writeFileSync(file, `${msgs.map((m) => JSON.stringify(m)).join("\n")}\n`, { mode: 0o600 });
    fs.utimesSync(file, now - s, now - s);
    if (projects.length > 0) {
      const meta = {
        project_root: projects[s % projects.length],
        created: new Date((now - s) * 1000).toISOString(),
      };
      fs.writeFileSync(file.replace(/\.jsonl$/, ".meta.json"), `${JSON.stringify(meta)}\n`, { mode: 0o600 });
    }
  }
}
