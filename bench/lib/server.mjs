/**
 * A zero-delay scripted chat-completions server for benchmarks. It stamps when each reply
 * was written and when each request arrived, so the gap between a reply and the next
 * request is the client's own cost for that turn.
 *
 * A reply is the assistant's text, or `{ toolCall: { name, arguments } }` for a client that
 * uses native tool calls (the peer agent in bench/peer.mjs). With `{ sse: true }` a request
 * that asks to stream gets the reply as one burst of SSE chunks; otherwise plain JSON.
 */
import http from "node:http";
import { listenLoopback } from "./loopback.mjs";

/** The chunks of one streamed reply, as an OpenAI-compatible server sends them. */
function sseChunks(reply) {
  const chunk = (delta, finish) =>
    `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const usage = `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })}\n\n`;
  if (typeof reply === "string")
    return `${chunk({ role: "assistant", content: reply }, null)}${chunk({}, "stop")}${usage}data: [DONE]\n\n`;
  const call = { index: 0, id: `call_${Math.random().toString(36).slice(2, 10)}`, type: "function" };
  const fn = { name: reply.toolCall.name, arguments: JSON.stringify(reply.toolCall.arguments) };
  return `${chunk({ role: "assistant", content: null, tool_calls: [{ ...call, function: fn }] }, null)}${chunk({}, "tool_calls")}${usage}data: [DONE]\n\n`;
}

/** The message of one plain JSON reply. */
function jsonMessage(reply) {
  if (typeof reply === "string")
    return { message: { role: "assistant", content: reply }, finish_reason: "stop" };
  const fn = { name: reply.toolCall.name, arguments: JSON.stringify(reply.toolCall.arguments) };
  return {
    message: {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: fn }],
    },
    finish_reason: "tool_calls",
  };
}

export async function startBenchServer(replies, { sse = false } = {}) {
  let next = 0;
  const stamps = []; // { arrived, replied }
  const bodies = [];
  const server = http.createServer((req, res) => {
    const arrived = performance.now();
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.url.endsWith("/models")) {
        res.end(JSON.stringify({ data: [{ id: "bench" }] }));
        return;
      }
      if (req.method !== "POST") {
        // Context-window discovery (GET /props, /api/ps, ...): not a turn, and no window to report.
        res.writeHead(404, { "content-type": "application/json" });
        res.end('{"error":"not found"}');
        return;
      }
      const request = Buffer.concat(chunks).toString("utf8");
      bodies.push(request);
      const reply = replies[Math.min(next, replies.length - 1)];
      next += 1;
      if (sse && /"stream"\s*:\s*true/.test(request)) {
        const stream = sseChunks(reply);
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.end(stream, () => stamps.push({ arrived, replied: performance.now() }));
        return;
      }
      const body = JSON.stringify({
        id: "x",
        object: "chat.completion",
        choices: [{ index: 0, ...jsonMessage(reply) }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body, () => stamps.push({ arrived, replied: performance.now() }));
    });
  });
  const loopback = await listenLoopback(server);
  return {
    ...loopback,
    stamps,
    bodies,
    reset(newReplies) {
      next = 0;
      stamps.length = 0;
      bodies.length = 0;
      if (newReplies) replies = newReplies;
    },
    /** Gaps between a reply and the following request, in ms. */
    gaps() {
      const out = [];
      for (let i = 1; i < stamps.length; i++) out.push(stamps[i].arrived - stamps[i - 1].replied);
      return out;
    },
  };
}
