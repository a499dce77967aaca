/**
 * Streaming answers (issue 13, docs/context.md "Streaming") through the real built CLI and the
 * scripted server streaming SSE: the answer's first bytes reach stdout while the server is
 * still pausing, stdout holds the answer exactly once, plain-JSON servers still work, and a
 * cut stream is one clear error, never a half answer presented as complete.
 */
import { describe, expect, it } from "vitest";
import { collect, spawnCli } from "../helpers/cli.js";
import { useScene } from "../helpers/scene.js";
import { type ScriptItem, startScriptedServer, step, stepText } from "../helpers/scripted-server.js";

const scene = useScene({ home: "scoot-home-", project: "scoot-proj-" });

const PAUSE_MS = 2_000;
// Escapes, a surrogate pair and a multi-byte character, so splits land inside them.
const ANSWER = 'The answer is 42.\nIt "quotes", uses a tab\tand a face 😀 — done.';

function finalStepText(answer = ANSWER, thought = "I know this one"): string {
  return stepText("final", answer, thought);
}

/** Splits the step text at `at` (inside the answer's JSON string) into two pieces. */
function halves(text: string): string[] {
  const at = text.indexOf("quotes") + 2;
  return [text.slice(0, at), text.slice(at)];
}

function spawnScoot(args: string[], api: "chat" | "responses" = "chat") {
  return spawnCli(args, {
    home: scene.home,
    cwd: scene.project,
    env: { SCOOT_BACKEND_BASE_URL: scene.server!.url, SCOOT_BACKEND_API: api },
  });
}

describe.each(["chat", "responses"] as const)("-e streams the final answer (%s)", (api) => {
  it("first answer bytes reach stdout before the pause ends; stdout is the answer exactly once", async () => {
    const order: string[] = [];
    const pieces = halves(finalStepText());
    scene.server = await startScriptedServer([
      {
        stream: pieces,
        pauseMs: PAUSE_MS,
        onPiece: (i) => order.push(`server sent piece ${i}`),
      },
    ]);
    const child = spawnScoot(["-e", "what is the answer?"], api);
    let sawFirstBytes = false;
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      if (!sawFirstBytes && d.length > 0) {
        sawFirstBytes = true;
        order.push(`stdout got ${JSON.stringify(d)}`);
      }
    });
    const r = await collect(child);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    // Ordering by events: the first stdout bytes came after piece 0 and before piece 1 was sent.
    expect(order[0]).toBe("server sent piece 0");
    expect(order[1]).toMatch(/^stdout got "The answer is 42\./);
    expect(order[2]).toBe("server sent piece 1");
    expect(r.stdout).toBe(`${ANSWER}\n`);
    // The request asked for a stream (and, on chat, for usage in the last chunk).
    const body = scene.server.completions()[0]!.body as Record<string, unknown>;
    expect(body.stream).toBe(true);
    if (api === "chat") expect(body.stream_options).toEqual({ include_usage: true });
  });

  it("escapes split across chunks at every position decode to the same answer once", async () => {
    const text = finalStepText();
    // One character per SSE event: every escape and the surrogate pair are split.
    scene.server = await startScriptedServer([{ stream: [...text] }]);
    const r = await collect(spawnScoot(["-e", "go"], api));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${ANSWER}\n`);
  });

  it("--json is unchanged: one object at the end", async () => {
    scene.server = await startScriptedServer([{ stream: halves(finalStepText()) }]);
    const r = await collect(spawnScoot(["--json", "-e", "go"], api));
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const out = JSON.parse(lines[0]!);
    expect(out).toMatchObject({ answer: ANSWER, status: "final", turns: 1 });
    // Usage came from the stream (the last chunk on chat, response.completed on Responses).
    expect(out.usage.prompt_tokens).toBeGreaterThan(0);
    expect(out.usage.completion_tokens).toBeGreaterThan(0);
  });

  it("a stream cut after the first bytes fails with one clear line, exit 1, answer not presented as complete", async () => {
    const pieces = halves(finalStepText());
    scene.server = await startScriptedServer([{ stream: [pieces[0]!], cut: true }]);
    const r = await collect(spawnScoot(["-e", "go"], api));
    expect(r.code).toBe(1);
    const errLines = r.stderr.trim().split("\n");
    expect(errLines).toHaveLength(1);
    expect(errLines[0]).toMatch(/stream was cut after \d+ bytes .*not retried/);
    // Not retried: one request.
    expect(scene.server.completions()).toHaveLength(1);
    // The fragment shown is ended, and it is not the answer.
    expect(r.stdout.endsWith("\n")).toBe(true);
    expect(r.stdout).not.toContain("done.");
  });

  it("a failure before the first byte is retried", async () => {
    scene.server = await startScriptedServer([{ drop: true }, { stream: halves(finalStepText()) }]);
    const r = await collect(spawnScoot(["-e", "go"], api));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${ANSWER}\n`);
    expect(scene.server.completions()).toHaveLength(2);
  });
});

describe("a server that streams every reply", () => {
  it("a multi-turn run keeps streaming: every request asks for it", async () => {
    scene.server = await startScriptedServer(
      [step("glob", '{"pattern":"*"}'), step("final", "streamed twice")],
      {
        streaming: "sse",
        ssePieces: 4,
      },
    );
    const r = await collect(spawnScoot(["-e", "go"]));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("streamed twice\n");
    expect(scene.server.completions().map((q) => (q.body as { stream?: boolean }).stream)).toEqual([
      true,
      true,
    ]);
  });
});

describe("servers that stream when not asked", () => {
  it.each([
    [
      "with backend.stream = false (a proxy that always streams)",
      { force: true },
      { SCOOT_BACKEND_STREAM: "false" },
    ],
    ["under a wrong content type", { contentType: "text/plain" }, {}],
  ])("an event stream %s is still read as one", async (_what, extra, env) => {
    scene.server = await startScriptedServer([{ stream: halves(finalStepText()), ...extra }]);
    const child = spawnCli(["-e", "go"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, ...env },
    });
    const r = await collect(child);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${ANSWER}\n`);
  });
});

describe("servers that do not stream", () => {
  it("a server answering stream:true with plain JSON works, and later turns stop asking", async () => {
    scene.server = await startScriptedServer([step("glob", '{"pattern":"*"}'), step("final", "plain works")]);
    const r = await collect(spawnScoot(["--trace", "-e", "go"]));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("plain works\n");
    const bodies = scene.server.completions().map((q) => q.body as Record<string, unknown>);
    expect(bodies[0]!.stream).toBe(true);
    expect(bodies[1]!.stream).toBeUndefined();
    expect(r.stderr).toContain("streaming off for this process: the server answered plain JSON");
  });

  it("a server that rejects stream gets the same turn without it, remembered", async () => {
    const items: ScriptItem[] = [
      { rejectStream: true },
      { reply: { thought: "t", action: "glob", action_input: '{"pattern":"*"}' } },
      { reply: { thought: "t", action: "final", action_input: "no stream here" } },
    ];
    scene.server = await startScriptedServer(items);
    const r = await collect(spawnScoot(["-e", "go"]));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("no stream here\n");
    const bodies = scene.server.completions().map((q) => q.body as Record<string, unknown>);
    expect(bodies.map((b) => b.stream)).toEqual([true, undefined, undefined]);
    // The structured-output level was not stepped down for it.
    expect(bodies[1]!.response_format).toMatchObject({ type: "json_schema" });
  });

  it("a server that rejects json_schema (streaming or not) steps down the level and keeps streaming", async () => {
    const rejectSchema = (): ScriptItem => (req) => {
      const b = req.body as { response_format?: { type?: string } };
      return b.response_format?.type === "json_schema"
        ? { status: 400, body: { error: { message: "json_schema not supported" } } }
        : { stream: halves(finalStepText()) };
    };
    scene.server = await startScriptedServer([rejectSchema(), rejectSchema(), rejectSchema()]);
    const r = await collect(spawnScoot(["-e", "go"]));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${ANSWER}\n`);
    const sent = scene.server.completions().map((q) => {
      const b = q.body as { stream?: boolean; response_format?: { type?: string } };
      return `${b.response_format?.type}/${b.stream === true ? "stream" : "plain"}`;
    });
    // The plain retry shows streaming was not the cause; the lower level streams again.
    expect(sent).toEqual(["json_schema/stream", "json_schema/plain", "json_object/stream"]);
  });

  it("backend.stream = false never asks", async () => {
    scene.server = await startScriptedServer([{ stream: halves(finalStepText()) }]);
    const child = spawnCli(["-e", "go"], {
      home: scene.home,
      cwd: scene.project,
      env: { SCOOT_BACKEND_BASE_URL: scene.server.url, SCOOT_BACKEND_STREAM: "false" },
    });
    const r = await collect(child);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${ANSWER}\n`);
    expect((scene.server.completions()[0]!.body as Record<string, unknown>).stream).toBeUndefined();
  });
});

describe("the REPL streams too", () => {
  it("the thought on stderr as it arrives, the answer on stdout once", async () => {
    scene.server = await startScriptedServer([{ stream: halves(finalStepText(ANSWER, "thinking it over")) }]);
    const child = spawnScoot(["repl"]);
    const r = await collect(child, { input: "what is the answer?\n" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${ANSWER}\n`);
    expect(r.stderr).toContain("thought: thinking it over\n");
  });
});

describe("redaction while streaming", () => {
  it("a credential split across pieces is still redacted on stdout", async () => {
    const secret = "sk-abcdefghijklmnop1234";
    const answer = `the key is ${secret} and a header Bearer abcdefgh12345678 end`;
    // One character per event: the credential arrives in many pieces.
    scene.server = await startScriptedServer([{ stream: [...finalStepText(answer)] }]);
    const r = await collect(spawnScoot(["-e", "go"]));
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("abcdefghijklmnop1234");
    expect(r.stdout).not.toContain("abcdefgh12345678");
    expect(r.stdout).toBe("the key is [REDACTED] and a header [REDACTED] end\n");
  });
});

describe("invalid streamed steps", () => {
  it("a final step that turns out invalid leaves nothing on stdout contradicting the error", async () => {
    // Two JSON objects: invalid as a whole, though the first looks like a final answer.
    const bad = `${finalStepText("first try")} ${finalStepText("second")}`;
    scene.server = await startScriptedServer([
      { stream: [bad.slice(0, 40), bad.slice(40)] },
      { stream: [finalStepText("fixed answer")] },
    ]);
    const r = await collect(spawnScoot(["-e", "go"]));
    expect(r.code).toBe(0);
    // The withdrawn text is on its own line, said so on stderr, and the answer follows once.
    expect(r.stdout.endsWith("fixed answer\n")).toBe(true);
    expect(r.stdout.split("fixed answer")).toHaveLength(2);
    expect(r.stderr).toMatch(/withdrawn \(invalid step: the reply contains 2 JSON objects/);
  });

  it("a non-final step streams nothing to stdout; --trace shows the thought as it arrives", async () => {
    const glob = JSON.stringify({
      thought: "look around first",
      action: "glob",
      action_input: '{"pattern":"*"}',
    });
    scene.server = await startScriptedServer([
      { stream: [glob.slice(0, 20), glob.slice(20)] },
      { stream: halves(finalStepText()) },
    ]);
    const r = await collect(spawnScoot(["--trace", "-e", "go"]));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${ANSWER}\n`);
    expect(r.stderr).toContain("[trace] thought: look around first\n");
    expect(r.stderr).toContain("[trace] action: glob");
    // Shown once, as it arrived, not again with the action.
    expect(r.stderr.split("look around first")).toHaveLength(2);
  });
});
