/**
 * Secrets judged by identity, not by name alone (docs/safety.md "What is protected"): a protected
 * file renamed, moved or hard-linked keeps its device and inode, so a file tool that opened
 * something compares the descriptor's identity (fstat) with these before it reads or writes.
 * Collected once per run, just before its first call that is more than the agent's own
 * bookkeeping (`lazyIdentities`, primed in agent/execute.ts): nothing Scoot runs can have moved
 * a protected file before that, so they are what a collection at start would find, and a run
 * that only answers stats none of the up to 1,000 files a long history leaves under `state/`.
 */
import fs from "node:fs";
import path from "node:path";
import type { GateSettings, IdentitySet } from "./types.js";

/** A protected directory contributes the files inside it, up to this many (a bound on start-up cost). */
export const MAX_IDENTITY_FILES = 1_000;
/** ... and this deep. */
export const MAX_IDENTITY_DEPTH = 4;

export function identityKey(st: { dev: number | bigint; ino: number | bigint }): string {
  return `${st.dev}:${st.ino}`;
}

/** True when what was opened is one of the protected files, whatever its name is now. */
export function isProtectedIdentity(
  settings: Pick<GateSettings, "protectedIdentities" | "mode">,
  st: { dev: number | bigint; ino: number | bigint },
): boolean {
  if (settings.mode === "unrestricted") return false;
  return settings.protectedIdentities.has(identityKey(st));
}

/** The refusal a file tool returns for a protected identity. */
export function protectedIdentityText(tool: string, shown: string): string {
  return `${tool}: denied: ${shown} is a protected file (a configured secret or Scoot's own, under another name); Scoot does not read or change it`;
}

/**
 * `collectIdentities(places())` when primed or first asked, then the same answers for the rest
 * of the run. The places are read then too, so a file made since the run started counts.
 */
export function lazyIdentities(places: () => readonly string[]): IdentitySet {
  let known: Set<string> | undefined;
  const collected = () => {
    known ??= collectIdentities(places());
    return known;
  };
  return {
    has: (key) => collected().has(key),
    prime: () => void collected(),
  };
}

/** Identities of `places` that exist: each file, and the files inside each directory (bounded). */
export function collectIdentities(places: readonly string[]): Set<string> {
  const out = new Set<string>();
  let budget = MAX_IDENTITY_FILES;
  const visit = (p: string, depth: number): void => {
    if (budget <= 0) return;
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      return;
    }
    if (st.isFile()) {
      out.add(identityKey(st));
      budget -= 1;
      return;
    }
    if (!st.isDirectory() || depth >= MAX_IDENTITY_DEPTH) return;
    let names: string[];
    try {
      names = fs.readdirSync(p);
    } catch {
      return;
    }
    for (const n of names) visit(path.join(p, n), depth + 1);
  };
  for (const p of places) visit(p, 0);
  return out;
}
