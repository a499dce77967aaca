/**
 * The grammar process: outlines by real parse for the Scoot process that started it
 * (grammar-process.ts), one request at a time over the IPC channel. It is started with V8's
 * `--liftoff-only`, so tree-sitter's WebAssembly grammars never reach V8's optimising
 * WebAssembly compiler, which on Node 24 takes hundreds of megabytes per grammar and can end the
 * process with "Fatal process out of memory: Zone" (nodejs/node#63421). It reads no file: the
 * text comes with the request. It ends when its parent goes away.
 */
import { LANGUAGES } from "./languages.js";
import { type GrammarOutcome, outlineWithGrammar } from "./treesitter.js";

/** One outline asked for: the language by its name in LANGUAGES. */
export interface GrammarRequest {
  id: number;
  language: string;
  text: string;
  limit: number;
  deadlineAt: number;
  grammarDir?: string;
}

export interface GrammarReply {
  id: number;
  outcome: GrammarOutcome;
}

async function answer(req: GrammarRequest): Promise<GrammarReply> {
  const spec = LANGUAGES.find((l) => l.name === req.language);
  if (!spec)
    return { id: req.id, outcome: { ok: false, reason: "grammar", error: `no language ${req.language}` } };
  const outcome = await outlineWithGrammar(req.text, spec, {
    limit: req.limit,
    deadlineAt: req.deadlineAt,
    ...(req.grammarDir ? { grammarDir: req.grammarDir } : {}),
  });
  // Only the data crosses the channel (the collector's methods do not).
  if (outcome.ok) outcome.collected = { entries: outcome.collected.entries, total: outcome.collected.total };
  return { id: req.id, outcome };
}

// One at a time: parsing is synchronous anyway, and the order of replies is the order asked.
let queue = Promise.resolve();
process.on("message", (req: GrammarRequest) => {
  queue = queue.then(async () => {
    const reply = await answer(req).catch(
      (e: unknown): GrammarReply => ({
        id: req.id,
        outcome: { ok: false, reason: "grammar", error: e instanceof Error ? e.message : String(e) },
      }),
    );
    process.send?.(reply);
  });
});
// When the parent ends, the channel closes and, with nothing else open, so does this process.
