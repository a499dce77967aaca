/**
 * A question is answered only on purpose (src/cli/repl/keys.ts, docs/keyboard.md "Questions
 * answered on purpose"): the key router fed as a terminal feeds it — one key per read at a
 * person's speed, several keys in one read, a bracketed paste — with a clock the test moves.
 * The tmux tests (test/view/question-typing.e2e.test.ts) drive the real REPL the same way.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { BURST_GAP_MS, keyRouter, type TypedAhead } from "../../src/cli/repl/keys.js";
import { PASTE_BEGIN, PASTE_END } from "../../src/cli/repl/paste.js";

/** 8 keys a second. */
const HUMAN_MS = 125;

function router() {
  let t = 1_000_000;
  const echoes: { state: TypedAhead; note?: string }[] = [];
  const cancels: string[] = [];
  const r = keyRouter({
    lineEditor: new PassThrough(),
    onCancel: (k) => cancels.push(k),
    onTypedAhead: (state, note) =>
      echoes.push({ state: { queued: [...state.queued], line: state.line }, note }),
    now: () => t,
  });
  r.startRun();
  const answers: (string | undefined)[] = [];
  const controller = new AbortController();
  /** Opens the question (or reads its next key): what it gets lands in `answers`. */
  const ask = (kind: "answer" | "text" = "answer") => {
    void r.nextKey(controller.signal, kind).then((k) => answers.push(k));
  };
  return {
    r,
    answers,
    cancels,
    echoes,
    ask,
    wait: (ms: number) => {
      t += ms;
    },
    /** Types each key in a read of its own, `ms` apart. */
    type: async (keys: string, ms = HUMAN_MS) => {
      for (const k of keys) {
        t += ms;
        r.feed(k);
        await Promise.resolve();
      }
    },
    settle: () => new Promise((resolve) => setImmediate(resolve)),
  };
}

describe("keys typed for the next goal never answer a question", () => {
  it("a question drawn mid-word: the rest of the word goes on into the line, nothing is answered", async () => {
    const k = router();
    await k.type("summ");
    k.ask();
    await k.type("arise the log");
    await k.settle();
    expect(k.answers).toEqual([]);
    expect(k.r.typedAhead.line).toBe("summarise the log");
  });

  it("after a pause the line is still open: single keys keep typing into it until it is sent", async () => {
    const k = router();
    await k.type("lin");
    k.ask();
    k.wait(2000);
    await k.type("ter");
    await k.settle();
    expect(k.answers).toEqual([]);
    expect(k.r.typedAhead.line).toBe("linter");
    // Enter queues it; the question then takes the next key.
    await k.type("\r");
    k.wait(2000);
    await k.type("n");
    await k.settle();
    expect(k.r.typedAhead.queued).toEqual(["linter"]);
    expect(k.answers).toEqual(["n"]);
  });

  it("a burst that began before the question (an Enter just pressed) goes on typing", async () => {
    const k = router();
    await k.type("first goal\r");
    k.ask();
    await k.type("a");
    await k.settle();
    expect(k.answers).toEqual([]);
    expect(k.r.typedAhead).toEqual({ queued: ["first goal"], line: "a" });
  });

  it("several keys in one read (a paste without brackets, tmux send-keys) never answer", async () => {
    const k = router();
    k.ask();
    k.wait(2000);
    k.r.feed("always");
    await k.settle();
    expect(k.answers).toEqual([]);
    expect(k.r.typedAhead.line).toBe("always");
  });

  it("a bracketed paste, even of one key, never answers", async () => {
    const k = router();
    k.ask();
    k.wait(2000);
    k.r.feed(`${PASTE_BEGIN}y`);
    k.wait(300);
    k.r.feed(PASTE_END);
    await k.settle();
    expect(k.answers).toEqual([]);
    expect(k.r.typedAhead.line).toBe("y");
  });

  it("an answer is not typing: a second question right after the first takes its own key", async () => {
    const k = router();
    k.ask();
    k.wait(2000);
    await k.type("y");
    await k.settle();
    k.r.closeQuestion();
    k.ask();
    await k.type("y", 200);
    await k.settle();
    expect(k.answers).toEqual(["y", "y"]);
  });

  it("with an empty line and no typing under way, one key answers", async () => {
    const k = router();
    k.ask();
    k.wait(2000);
    await k.type("y");
    await k.settle();
    expect(k.answers).toEqual(["y"]);
  });
});

describe("yes⏎ and no⏎ answer and send nothing", () => {
  it("yes⏎ typed at a person's speed: y answers, es⏎ is not typed ahead", async () => {
    const k = router();
    k.ask();
    k.wait(2000);
    await k.type("y");
    k.r.closeQuestion();
    await k.type("es\r");
    await k.settle();
    expect(k.answers).toEqual(["y"]);
    expect(k.r.typedAhead).toEqual({ queued: [], line: "" });
  });

  it("yes⏎ when y ended the run at once: es⏎ does not reach the prompt as a goal", async () => {
    const written: string[] = [];
    let t = 1_000_000;
    const editor = new PassThrough();
    editor.on("data", (d) => written.push(String(d)));
    const r = keyRouter({ lineEditor: editor, onCancel: () => {}, onTypedAhead: () => {}, now: () => t });
    r.startRun();
    const got = r.nextKey(new AbortController().signal);
    t += 2000;
    r.feed("y");
    expect(await got).toBe("y");
    r.closeQuestion();
    r.endRun();
    for (const k of "es\r") {
      t += HUMAN_MS;
      r.feed(k);
    }
    // A goal typed after a pause is the line editor's.
    t += BURST_GAP_MS + 100;
    r.feed("next");
    await new Promise((resolve) => setImmediate(resolve));
    expect(written.join("")).toBe("next");
  });

  it("no⏎: n refuses, and the Enter ends the reason line empty (the o is not a reason)", async () => {
    const k = router();
    k.ask();
    k.wait(2000);
    await k.type("n");
    await k.settle();
    k.ask("text");
    await k.type("o\r");
    await k.settle();
    expect(k.answers).toEqual(["n", "\r"]);
  });

  it("n followed by a real reason keeps every letter of it", async () => {
    const k = router();
    k.ask();
    k.wait(2000);
    await k.type("n");
    await k.settle();
    // The reason line reads key after key, as readKeyedLine does.
    let reason = "";
    const reading = (async () => {
      for (;;) {
        const key = await k.r.nextKey(new AbortController().signal, "text");
        if (key === undefined || key === "\r") return;
        reason += key;
      }
    })();
    await k.type("ok now\r");
    await reading;
    expect(k.answers).toEqual(["n"]);
    expect(reason).toBe("ok now");
  });

  it("yes typed as a line (it began in a burst) answers on Enter instead of being queued", async () => {
    const k = router();
    await k.type("x\x7f");
    k.ask();
    await k.type("yes\r");
    await k.settle();
    expect(k.answers).toEqual(["y"]);
    expect(k.r.typedAhead.queued).toEqual([]);
  });

  it("always⏎: a answers, the rest never answers the rule offer that follows", async () => {
    const k = router();
    k.ask();
    k.wait(2000);
    await k.type("a");
    await k.settle();
    // The rule offer reads its own key: the "y" of "always" must not answer it.
    k.ask();
    await k.type("lways\r");
    await k.settle();
    expect(k.answers).toEqual(["a"]);
    expect(k.r.typedAhead.line).toBe("");
  });

  it("y then a pause: the next keys are typed ahead as usual", async () => {
    const k = router();
    k.ask();
    k.wait(2000);
    await k.type("y");
    k.r.closeQuestion();
    k.wait(BURST_GAP_MS + 100);
    await k.type("es");
    expect(k.r.typedAhead.line).toBe("es");
  });
});

describe("the other keys", () => {
  it("Esc answers (refuses) an open question even with a line open; Ctrl-C cancels the goal", async () => {
    const k = router();
    await k.type("half");
    k.ask();
    k.wait(2000);
    await k.type("\x1b");
    await k.type("\x03");
    await k.settle();
    expect(k.answers).toEqual(["\x1b"]);
    expect(k.cancels).toEqual(["Ctrl-C"]);
  });

  it("a lone Enter at an open question with nothing typed goes to the question (which repeats its hint)", async () => {
    const k = router();
    k.ask();
    k.wait(2000);
    await k.type("\r");
    await k.settle();
    expect(k.answers).toEqual(["\r"]);
    expect(k.r.typedAhead.queued).toEqual([]);
  });

  it("a reason may be pasted: text a question reads is not an answer", async () => {
    const k = router();
    k.ask("text");
    k.wait(2000);
    k.r.feed("ab");
    await k.settle();
    k.ask("text");
    await k.settle();
    expect(k.answers).toEqual(["a", "b"]);
  });
});

describe("typing on at once after Enter at the prompt", () => {
  it("keys between the sent line and the goal's start are the typed-ahead line's first keys", async () => {
    const written: string[] = [];
    const editor = new PassThrough();
    editor.on("data", (d) => written.push(String(d)));
    const r = keyRouter({ lineEditor: editor, onCancel: () => {}, onTypedAhead: () => {} });
    r.feed("first goal\r");
    r.feed("s");
    r.feed("um");
    r.startRun();
    r.feed("marise");
    await new Promise((resolve) => setImmediate(resolve));
    expect(written.join("")).toBe("first goal\r");
    expect(r.typedAhead.line).toBe("summarise");
  });

  it("a line that ran no goal (a command, an empty line) gives the held keys back to the line editor", async () => {
    const written: string[] = [];
    const editor = new PassThrough();
    editor.on("data", (d) => written.push(String(d)));
    const r = keyRouter({ lineEditor: editor, onCancel: () => {}, onTypedAhead: () => {} });
    r.feed("/status\rne");
    r.release();
    r.feed("xt");
    await new Promise((resolve) => setImmediate(resolve));
    expect(written.join("")).toBe("/status\rnext");
  });

  it("a Ctrl-C typed right after the line still cancels the goal it started", () => {
    const cancels: string[] = [];
    const r = keyRouter({
      lineEditor: new PassThrough(),
      onCancel: (k) => cancels.push(k),
      onTypedAhead: () => {},
    });
    r.feed("go\r\x03");
    r.startRun();
    expect(cancels).toEqual(["Ctrl-C"]);
  });
});
